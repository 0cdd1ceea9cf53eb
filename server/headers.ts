// The headers every answer carries, with a fresh CSP nonce each time: set by Express's first middleware and by the
// shared-page front (server/shared-page.ts), which answers ahead of Express.
import { randomBytes } from "node:crypto";
import type { Config } from "~/config.server";

// The bucket origins for connect-src: with S3 storage the browser PUTs uploads to presigned URLs, on the bucket's
// endpoint (path style) or the bucket's own host under it (virtual-host style).
function bucketOrigins(s3: Config["s3"]): string[] {
  if (!s3) return [];
  if (!s3.endpoint) return ["https://*.amazonaws.com"];
  const url = new URL(s3.endpoint);
  return s3.forcePathStyle ? [url.origin] : [`${url.protocol}//${s3.bucket}.${url.host}`];
}

/**
 * `nonce => headers`, for the configuration (the policy's fixed parts are built once). `providerOrigins`: the
 * company sign-in providers' origins as the app last read them (they change when an admin adds one).
 */
export function securityHeaders(
  cfg: Config,
  { dev, providerOrigins }: { dev: boolean; providerOrigins: () => string[] },
): (nonce: string) => Record<string, string> {
  const connectSrc = ["'self'", ...(dev ? ["ws:", "wss:"] : []), ...bucketOrigins(cfg.s3)].join(" ");
  // With MEDIA_OFFLOAD=presigned, images come from the bucket after a redirect.
  // Company sign-in: a form post may end at a provider (the e-mail field of an SSO-only domain, sign-out's
  // end-session redirect), and form-action holds for the redirects after a post.
  const formAction = () => ["'self'", ...providerOrigins()].join(" ");
  const imgSrc = ["'self'", "data:", "blob:", ...(cfg.media.offload === "presigned" ? bucketOrigins(cfg.s3) : [])].join(" ");
  const fixed: Record<string, string> = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    ...(cfg.production ? { "Strict-Transport-Security": "max-age=31536000; includeSubDomains" } : {}),
  };
  const policy = (nonce: string) =>
    [
      "default-src 'self'",
      `script-src 'self' 'nonce-${nonce}'`,
      // No inline styles in the HTML at all; script sets styles through the CSSOM, which the policy allows.
      `style-src 'self' 'nonce-${nonce}'`,
      `img-src ${imgSrc}`,
      "media-src 'self' blob:",
      "font-src 'self'",
      `connect-src ${connectSrc}`,
      `form-action ${formAction()}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "object-src 'none'",
    ].join("; ");
  return (nonce) => ({ "Content-Security-Policy": policy(nonce), ...fixed });
}

// Nonces are cut from a pool of CSPRNG bytes (each byte used once): one randomBytes call per 256 answers.
let pool = Buffer.alloc(0);
let used = 0;
export function newNonce(): string {
  if (used + 16 > pool.length) {
    pool = randomBytes(4096);
    used = 0;
  }
  used += 16;
  return pool.toString("base64", used - 16, used);
}
