// GET /shared-board/<url>: the shared-page cache's front, ahead of Express (docs/decisions/0011). A cached page is
// answered here (the link checked and the view counted by the app first, every time) for a fraction of what the
// Express pipeline costs; anything else goes on to Express with the link already resolved (`req.sharedPage`).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import type * as Entry from "~/entry.server";

const PREFIX = "/shared-board/";

interface Front {
  entry: () => Promise<typeof Entry>;
  headersFor: (nonce: string) => Record<string, string>;
  newNonce: () => string;
  compress: RequestHandler;
  clientIp: (req: IncomingMessage) => string;
}

/**
 * `(req, res) => Promise<boolean>`: true when it answered. `entry` gives the server build's entry module, `headersFor`
 * the security headers for a nonce, `compress` the compression middleware, `clientIp` the address as Express takes it.
 */
export function sharedPageFront({ entry, headersFor, newNonce, compress, clientIp }: Front) {
  return async (req: IncomingMessage & { sharedPage?: unknown }, res: ServerResponse): Promise<boolean> => {
    const url = req.url ?? "";
    if ((req.method !== "GET" && req.method !== "HEAD") || !url.startsWith(PREFIX)) return false;
    const at = url.indexOf("?");
    const raw = url.slice(PREFIX.length, at < 0 ? undefined : at);
    if (!raw || raw.includes("/")) return false; // the image pages, the ZIP, a trailing slash: Remix alone
    let sharedUrl;
    try {
      sharedUrl = decodeURIComponent(raw);
    } catch {
      return false;
    }
    const nonce = newNonce();
    const answer = await (
      await entry()
    ).sharedPageAnswer({
      sharedUrl,
      search: at < 0 ? "" : url.slice(at),
      cookie: req.headers.cookie ?? null,
      clientIp: clientIp(req),
      nonce,
    });
    if (!answer.hit) {
      req.sharedPage = answer.pending;
      return false;
    }
    res.statusCode = 200;
    for (const [name, value] of Object.entries(headersFor(nonce))) res.setHeader(name, value);
    // The page's own headers (no-referrer, noindex, no-store) replace the server-wide ones of the same name.
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    // Express's compression middleware on a plain node:http pair: it reads only headers and wraps write/end.
    compress(req as Parameters<RequestHandler>[0], res as Parameters<RequestHandler>[1], () => {
      // One writev for the headers and every part.
      res.cork();
      for (const chunk of answer.body) res.write(chunk);
      res.end();
      res.uncork();
    });
    return true;
  };
}
