// Admission control: a busy server answers "busy, try again" at once instead of letting requests hang. Node runs
// one request's JavaScript at a time, so letting every connection in at once only makes every answer slow (and,
// past a point, time out at the client after 30 s). Instead at most `concurrency` requests run; up to `queue` more
// wait in order, each at most `waitMs`; anything beyond gets 503 with Retry-After. A request that has not sent its
// headers after `timeoutMs` gets 503 too (the work it started finishes, its late answer is dropped).

const RETRY_AFTER_SECONDS = 2;

function busy(req, res, log, reason) {
  if (res.headersSent) return;
  log.warn("request refused", { method: req.method, path: req.path, status: 503, reason });
  res
    .status(503)
    .set({ "Retry-After": String(RETRY_AFTER_SECONDS), "Cache-Control": "no-store" })
    .type("text/plain")
    .send("The server is busy. Please try again in a moment.");
}

/**
 * Express middleware. `exempt(req)` lets a request through uncounted and untimed: uploads stream a body for as long
 * as the client's line needs, waiting on the network rather than the CPU, and have limits of their own.
 * @param {{ concurrency: number, queue: number, waitMs: number, timeoutMs: number }} limits
 * @param {{ warn: (msg: string, fields: Record<string, unknown>) => void }} log
 * @param {(req: import("express").Request) => boolean} [exempt]
 */
export function admission({ concurrency, queue, waitMs, timeoutMs }, log, exempt = () => false) {
  let running = 0;
  const waiting = [];

  const next = () => {
    while (running < concurrency && waiting.length) waiting.shift().admit();
  };

  const run = (req, res, proceed) => {
    running += 1;
    let done = false;
    const timer = setTimeout(() => busy(req, res, log, `no answer within ${timeoutMs / 1000} s`), timeoutMs).unref();
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      running -= 1;
      next();
    };
    res.once("finish", finish);
    res.once("close", finish);
    proceed();
  };

  const middleware = (req, res, proceed) => {
    if (exempt(req)) return proceed();
    if (running < concurrency && !waiting.length) return run(req, res, proceed);
    if (waiting.length >= queue) return busy(req, res, log, "queue full");
    const entry = {
      admit: () => {
        clearTimeout(entry.timer);
        run(req, res, proceed);
      },
      timer: setTimeout(() => {
        waiting.splice(waiting.indexOf(entry), 1);
        busy(req, res, log, `waited ${waitMs / 1000} s`);
      }, waitMs).unref(),
    };
    waiting.push(entry);
    // A client that gave up while waiting frees its place.
    res.once("close", () => {
      const at = waiting.indexOf(entry);
      if (at < 0) return;
      waiting.splice(at, 1);
      clearTimeout(entry.timer);
    });
  };
  middleware.stats = () => ({ running, waiting: waiting.length });
  return middleware;
}
