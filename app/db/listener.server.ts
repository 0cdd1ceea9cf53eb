import { randomUUID } from "node:crypto";
import pg from "pg";
import { log } from "~/lib/log.server";
import { metrics } from "~/lib/metrics.server";

/** A LISTEN session of its own; `close` ends it (and any reconnection it was waiting for). */
export interface Listener {
  close(): Promise<void>;
}

/** The first reconnection waits about this long, each next one twice as long, up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;
/** How long a new session waits for its own probe notification before it says it hears nothing. */
const PROBE_MS = 5_000;
const PROBE_PREFIX = "koala-probe:";

/**
 * LISTENs on `channel` on a connection of its own: a pool's connection goes back to the pool after each query, and
 * its LISTEN with it. `onNotice` is called with each notification's payload, and with null each time the session is
 * (re-)established: what was sent before, or while it was down, was not heard, so its listener looks at once instead.
 * A dropped session (the server restarted, the backend was terminated, the network broke) is reconnected with backoff
 * and jitter, so that many instances do not all return at the same moment; the loss is logged once, and the return.
 *
 * Each new session is sent a probe from another connection. Behind a pooler in transaction mode (PgBouncer) a
 * LISTEN "succeeds" but its server connection goes back to the pool, and nothing is ever heard: the probe does not
 * come, which is logged as a warning and shown as koala_listen_heard 0 (set DATABASE_DIRECT_URL). The runners still
 * poll meanwhile.
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
      metrics().listenHeard.set({ channel }, 0);
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
    const probe = `${PROBE_PREFIX}${randomUUID()}`;
    let heard = false;
    client.on("notification", (n) => {
      if (n.channel !== channel) return;
      if (!n.payload?.startsWith(PROBE_PREFIX)) return onNotice(n.payload ?? "");
      if (n.payload !== probe || heard) return; // another instance's probe
      heard = true;
      metrics().listenHeard.set({ channel }, 1);
    });
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
    setTimeout(() => {
      if (!heard && !lost && !closed)
        log.warn("LISTEN session hears nothing: a transaction pooler (PgBouncer) between it and PostgreSQL? Set DATABASE_DIRECT_URL", {
          channel,
        });
    }, PROBE_MS).unref();
    void sendProbe(clientConfig, channel, probe);
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

/** NOTIFYs `probe` on `channel` from a connection of its own (the session's own would hear itself even behind a pooler). */
async function sendProbe(clientConfig: pg.ClientConfig, channel: string, probe: string) {
  const sender = new pg.Client(clientConfig);
  sender.on("error", () => {});
  try {
    await sender.connect();
    await sender.query("select pg_notify($1, $2)", [channel, probe]);
  } catch (err) {
    log.warn("LISTEN probe not sent", { channel, error: errorText(err) });
  } finally {
    await sender.end().catch(() => {});
  }
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err ?? ""));
