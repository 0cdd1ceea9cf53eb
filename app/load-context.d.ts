import "@remix-run/node";

declare module "@remix-run/node" {
  interface AppLoadContext {
    /** Per-request CSP nonce, set by the HTTP front (server/index.ts). */
    nonce: string;
    /** The client's address (X-Forwarded-For only when TRUST_PROXY is on). */
    clientIp: string;
    /** GET /shared-board/:sharedUrl only: the link the shared-page front (server/shared-page.ts) resolved ahead of Remix, and the page cache's slot. */
    sharedPage?: import("~/web/shared-page-cache.server").SharedPagePending | null;
    /** Whether a page may be answered from an earlier render (web/render-memo.server.ts): not under `--dev`, where code changes while data does not. */
    memoizeRenders?: boolean;
    /** The request's id (server/observe.ts: a trusted proxy's X-Request-Id, or one made), for its log lines. */
    requestId?: string;
  }
}
