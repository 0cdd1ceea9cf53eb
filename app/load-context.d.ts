import "@remix-run/node";

declare module "@remix-run/node" {
  interface AppLoadContext {
    /** Per-request CSP nonce, set by server.mjs. */
    nonce: string;
    /** The client's address (X-Forwarded-For only when TRUST_PROXY is on). */
    clientIp: string;
  }
}
