// GET /shared-board/<url>: the shared-page cache's front, ahead of Express (docs/decisions/0011). A cached page is
// answered here (the link checked and the view counted by the app first, every time) for a fraction of what the
// Express pipeline costs; anything else goes on to Express with the link already resolved (`req.sharedPage`).
const PREFIX = "/shared-board/";

/**
 * `(req, res) => Promise<boolean>`: true when it answered. `entry` gives the server build's entry module, `headersFor`
 * the security headers for a nonce, `compress` the compression middleware, `clientIp` the address as Express takes it.
 */
export function sharedPageFront({ entry, headersFor, newNonce, compress, clientIp }) {
  return async (req, res) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || !req.url.startsWith(PREFIX)) return false;
    const at = req.url.indexOf("?");
    const raw = req.url.slice(PREFIX.length, at < 0 ? undefined : at);
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
      search: at < 0 ? "" : req.url.slice(at),
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
    compress(req, res, () => {
      // One writev for the headers and every part.
      res.cork();
      for (const chunk of answer.body) res.write(chunk);
      res.end();
      res.uncork();
    });
    return true;
  };
}
