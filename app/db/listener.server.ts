import pg from "pg";
import { log } from "~/lib/log.server";

/** A LISTEN session of its own; `close` ends it (and any reconnection it was waiting for). */
export interface Listener {
  close(): Promise<void>;
}

/** The first reconnection waits about this long, each next one twice as long, up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;

/**
 * LISTENs on `channel` on a connection of its own: a pool's connection goes back to the pool after each query, and
 * its LISTEN with it. `onNotice` is called with each notification's payload, and with null each time the session is
 * (re-)established: what was sent before, or while it was down, was not heard, so its listener looks at once instead.
 * A dropped session (the server restarted, the backend was terminated, the network broke) is reconnected with backoff
 * and jitter, so that many instances do not all return at the same moment; the loss is logged once, and the return.
 */
export function listenOn(clientConfig: pg.ClientConfig, channel: string, onNotice: (payload: string | null) => void): Listener {
  let closed = false;
  let current: pg.Client | null = null;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  let downSince = 0;

  const open = async () => {
    const client = new pg.Client(clientConfig);
    current = client;
    let lost = false;
    const drop = (err?: unknown) => {
      if (lost) return;
      lost = true;
      if (current === client) current = null;
      void client.end().catch(() => {});
      if (closed) return;
      if (!downSince) {
        downSince = Date.now();
        log.warn("LISTEN session lost: reconnecting", { channel, error: errorText(err) });
      }
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** failures++);
      retry = setTimeout(() => void open(), delay * (0.75 + Math.random() / 2));
    };
    client.on("notification", (n) => n.channel === channel && onNotice(n.payload ?? ""));
    client.on("error", drop);
    client.on("end", () => drop(new Error("connection ended")));
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (err) {
      return drop(err);
    }
    if (closed || lost) return void client.end().catch(() => {});
    if (downSince) log.info("LISTEN session back", { channel, downSeconds: (Date.now() - downSince) / 1000 });
    failures = 0;
    downSince = 0;
    onNotice(null);
  };
  void open();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      const client = current;
      current = null;
      if (!client) return;
      // end() waits for the server to close the socket: a database host gone silent would hold a shutdown for
      // minutes. A second, then the socket is cut.
      const ended = client.end().then(
        () => true,
        () => true,
      );
      const late = new Promise<false>((r) => setTimeout(() => r(false), 1000).unref());
      if (!(await Promise.race([ended, late])))
        (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    },
  };
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err ?? ""));
