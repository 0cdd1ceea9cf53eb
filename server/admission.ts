// Admission control: a busy server answers "busy, try again" at once instead of letting requests hang. Node runs
// one request's JavaScript at a time, so letting every connection in at once only makes every answer slow (and,
// past a point, time out at the client after 30 s). Instead at most `concurrency` requests run; up to `queue` more
// wait in order, each at most `waitMs`; anything beyond gets 503 with Retry-After. A request that has not sent its
// headers after `timeoutMs` gets 503 too (the work it started finishes, its late answer is dropped).
//
// A request holds its place until its answer's headers go out, not until the client has read the body: by then the
// work is done and the body goes at the client's pace (a ZIP, an original, a long page), so a client that stops
// reading cannot keep a place (issue 24: sixteen stalled downloads held every place). What bounds those bodies is
// the downloads' own limits (app/lib/download-slots.server.ts) and the server's write-idle limit
// (RESPONSE_IDLE_SECONDS in server/index.ts).
//
// Requests start one per turn of the event loop, in the order they came (docs/decisions/0019). Node accepts one new
// connection per turn, and a turn runs every request whose bytes arrived in it: started at once, fifty busy
// connections made each turn ~100 ms of rendering, and fifty connections opened together waited up to 3 s to be
// accepted. Starting from the loop's check phase keeps a turn to about one request's work.

import type { NextFunction, Request, RequestHandler, Response } from "express";
import { loggedPath, requestIdOf } from "./observe";

const RETRY_AFTER_SECONDS = 2;

export interface Limits {
  concurrency: number;
  queue: number;
  waitMs: number;
  timeoutMs: number;
}
export interface WarnLog {
  warn: (msg: string, fields: Record<string, unknown>) => void;
}
/** Requests running and waiting now, and those refused so far by reason (queue_full, waited, timeout): /metrics. */
export type Admission = RequestHandler & { stats: () => { running: number; waiting: number; refused: Record<Refusal, number> } };
type Refusal = "queue_full" | "waited" | "timeout";

function busy(req: Request, res: Response, log: WarnLog, reason: string, refused?: () => void) {
  if (res.headersSent) return;
  refused?.();
  log.warn("request refused", { method: req.method, path: loggedPath(req.originalUrl), requestId: requestIdOf(req), status: 503, reason });
  res
    .status(503)
    .set({ "Retry-After": String(RETRY_AFTER_SECONDS), "Cache-Control": "no-store" })
    .type("text/plain")
    .send("The server is busy. Please try again in a moment.");
}

/**
 * Express middleware. `exempt(req)` lets a request through uncounted and untimed: uploads stream a body for as long
 * as the client's line needs, waiting on the network rather than the CPU, and have limits of their own.
 */
export function admission(
  { concurrency, queue, waitMs, timeoutMs }: Limits,
  log: WarnLog,
  exempt: (req: Request) => boolean = () => false,
): Admission {
  let running = 0;
  interface Waiting {
    admit: () => void;
    timer: NodeJS.Timeout;
  }
  const waiting: Waiting[] = [];
  let turnTaken = false;
  // Requests this middleware has let in. It is mounted on more than one path (the media routes, then everything), so
  // a request can pass it twice: counted again, it would wait in the queue for a second place while holding its
  // first, and sixteen such requests would hold every place while waiting for themselves.
  const admitted = new WeakSet<Request>();
  const refused: Record<Refusal, number> = { queue_full: 0, waited: 0, timeout: 0 };
  const count = (why: Refusal) => () => void (refused[why] += 1);

  /** The next waiting request starts in the loop's next check phase, one per turn. */
  const takeTurn = () => {
    turnTaken = false;
    if (running < concurrency && waiting.length) waiting.shift()!.admit();
    if (running < concurrency && waiting.length) nextTurn();
  };
  const nextTurn = () => {
    if (turnTaken) return;
    turnTaken = true;
    setImmediate(takeTurn);
  };

  const run = (req: Request, res: Response, proceed: NextFunction) => {
    admitted.add(req);
    running += 1;
    let done = false;
    const timer = setTimeout(() => busy(req, res, log, `no answer within ${timeoutMs / 1000} s`, count("timeout")), timeoutMs).unref();
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      running -= 1;
      nextTurn();
    };
    res.once("finish", finish);
    res.once("close", finish);
    // Every way headers go out passes writeHead (Node's implicit headers call it too).
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: Parameters<Response["writeHead"]>) {
      finish();
      return writeHead.apply(this, args);
    } as Response["writeHead"];
    proceed();
  };

  const middleware = (req: Request, res: Response, proceed: NextFunction) => {
    if (exempt(req) || admitted.has(req)) return proceed();
    // Those that a free place awaits are not queued; the queue is what waits beyond them.
    if (waiting.length - Math.max(0, concurrency - running) >= queue) return busy(req, res, log, "queue full", count("queue_full"));
    const entry: Waiting = {
      admit: () => {
        clearTimeout(entry.timer);
        run(req, res, proceed);
      },
      timer: setTimeout(() => {
        waiting.splice(waiting.indexOf(entry), 1);
        busy(req, res, log, `waited ${waitMs / 1000} s`, count("waited"));
      }, waitMs).unref(),
    };
    waiting.push(entry);
    nextTurn();
    // A client that gave up while waiting frees its place.
    res.once("close", () => {
      const at = waiting.indexOf(entry);
      if (at < 0) return;
      waiting.splice(at, 1);
      clearTimeout(entry.timer);
    });
  };
  middleware.stats = () => ({ running, waiting: waiting.length, refused: { ...refused } });
  return middleware;
}
