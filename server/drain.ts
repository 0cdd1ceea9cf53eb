// Graceful shutdown of the HTTP side: on SIGTERM the server stops accepting connections, every response from then
// on says `Connection: close` (so a keep-alive client, or a proxy, opens its next request elsewhere), idle
// connections close at once, and the requests in flight (a large upload, a ZIP on its way out) get the grace period
// to finish. What is still open then is cut, and each request cut is logged.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { loggedPath, requestIdOf } from "./observe";

export interface Drain {
  /** Counts a request in flight until its response ends. */
  track(req: IncomingMessage, res: ServerResponse): void;
  readonly draining: boolean;
  /** Requests received and not yet answered to their end. */
  readonly inFlight: number;
  /** Stops taking connections and waits for those in flight, at most `graceMs`; resolves with the requests it cut. */
  drain(server: Server, graceMs: number): Promise<{ method: string; path: string; requestId?: string }[]>;
}

export function drainer(): Drain {
  const open = new Map<ServerResponse, { method: string; path: string; requestId?: string }>();
  let draining = false;
  let emptied: (() => void) | null = null;
  return {
    track(req, res) {
      // As the access log names it: the token segment of a share link's path masked, its request id beside it.
      open.set(res, { method: req.method ?? "", path: loggedPath(req.url ?? ""), requestId: requestIdOf(req) });
      if (draining) res.setHeader("Connection", "close");
      const done = () => {
        open.delete(res);
        if (open.size === 0) emptied?.();
      };
      res.once("finish", done);
      res.once("close", done);
    },
    get draining() {
      return draining;
    },
    get inFlight() {
      return open.size;
    },
    async drain(server, graceMs) {
      draining = true;
      for (const res of open.keys()) if (!res.headersSent) res.setHeader("Connection", "close");
      server.close();
      server.closeIdleConnections();
      if (open.size) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => (emptied = resolve)),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
        ]);
        clearTimeout(timer);
      }
      const cut = [...open.values()];
      if (cut.length) server.closeAllConnections();
      return cut;
    },
  };
}
