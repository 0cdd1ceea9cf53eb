import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, db, setConnection, type Connection } from "~/db/connection.server";
import { claimJob, enqueueJob, getJob, releaseJob } from "~/models/jobs.server";
import { defineJob, startRunner } from "~/services/jobs.server";
import { freshDatabase, PG_URL, sql, type TestDatabase } from "../helpers/db";

/**
 * Idle runners are woken, not only polled (issue 26): on PostgreSQL a job queued anywhere is announced (NOTIFY) and
 * each process with a runner LISTENs on a session of its own; SQLite's runners poll. The runners here poll once a
 * minute, so a job started within seconds was started by a wake-up, not by a poll.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WOKEN_MS = 5_000;
const SLOW_POLL_MS = 60_000;
/** A runner's registry of one kind nobody queues. */
const idle = { "never-queued": defineJob(async () => {}) };

describe.runIf(PG_URL)("LISTEN/NOTIFY wake-ups (postgres)", () => {
  let t: TestDatabase;
  /** This process's connection, as an instance's: its sessions carry `name`, so they can be told apart. */
  let own: Connection;
  /** Another instance's connection to the same schema. */
  let other: Connection;
  const name = `koala-wake-${randomBytes(4).toString("hex")}`;
  const named = (url: string, app: string) => `${url}${url.includes("?") ? "&" : "?"}application_name=${app}`;

  /** The LISTEN sessions open under an application name (the pool's sessions have run other statements). */
  const listening = async (app = name) =>
    (
      await sql<{ pid: number }>`select pid from pg_stat_activity where application_name = ${app} and query ilike 'listen %'`.execute(
        other.db,
      )
    ).rows.map((r) => r.pid);

  beforeAll(async () => {
    t = await freshDatabase("postgres");
    own = connect({ dialect: "postgres", url: named(t.url, name) });
    other = connect({ dialect: "postgres", url: t.url });
    setConnection(own);
  });
  afterAll(async () => {
    setConnection(t.connection);
    await Promise.all([own.close(), other.close()]);
    await t.drop();
  });

  /** A runner that polls once a minute, and what it started when; started once the last test's session is gone. */
  const slowRunner = async (type: string) => {
    await expect.poll(() => listening(), { timeout: WOKEN_MS, interval: 50 }).toEqual([]);
    const started: number[] = [];
    const runner = startRunner({ [type]: defineJob(async () => void started.push(Date.now())) }, { pollMs: SLOW_POLL_MS });
    return { runner, started };
  };

  it("announces a job due now when its transaction commits, several in one as one, a job handed back, and not a job due later", async () => {
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: PG_URL });
    await listener.connect();
    try {
      await listener.query("LISTEN koala_jobs");
      listener.on("notification", (n) => heard.push(n.payload ?? ""));
      const [{ schema }] = (await sql<{ schema: string }>`select current_schema() as schema`.execute(db())).rows as [{ schema: string }];
      // Other test files' schemas announce on the same channel; only this one's count.
      const ours = () => heard.filter((p) => p === schema).length;
      const type = "announced";
      await enqueueJob(type, {});
      await expect.poll(ours, { timeout: WOKEN_MS, interval: 20 }).toBe(1);
      await db()
        .transaction()
        .execute(async (trx) => {
          await enqueueJob(type, {}, {}, trx);
          await enqueueJob(type, {}, {}, trx);
          await sleep(300);
          expect(ours()).toBe(1);
        });
      await expect.poll(ours, { timeout: WOKEN_MS, interval: 20 }).toBe(2);
      await enqueueJob(type, {}, { runAt: Date.now() + 3_600_000 });
      expect(await releaseJob((await claimJob("w", [type]))!)).toBe(true);
      await expect.poll(ours, { timeout: WOKEN_MS, interval: 20 }).toBe(3);
      await sleep(300);
      expect(ours()).toBe(3);
    } finally {
      await listener.end();
    }
  });

  it("wakes a runner that polls once a minute when another instance's transaction queues a job, as it commits", async () => {
    const type = "woken";
    const { runner, started } = await slowRunner(type);
    try {
      await expect.poll(() => listening(), { timeout: 15_000, interval: 50 }).toHaveLength(1);
      await sleep(300);
      // Queued inside a transaction that commits later: announced at the commit. Announced before it, the runner
      // would have looked, found nothing it could see, and slept for its minute.
      await other.db.transaction().execute(async (trx) => {
        await enqueueJob(type, {}, {}, trx);
        await sleep(500);
      });
      await expect.poll(() => started.length, { timeout: WOKEN_MS, interval: 20 }).toBe(1);
    } finally {
      await runner.stop();
    }
  });

  it("opens its LISTEN session again after the backend is terminated, and is woken through it", async () => {
    const type = "woken-again";
    const { runner, started } = await slowRunner(type);
    try {
      await expect.poll(() => listening(), { timeout: 15_000, interval: 50 }).toHaveLength(1);
      const [first] = await listening();
      await sql`select pg_terminate_backend(${first})`.execute(other.db);
      await expect.poll(async () => (await listening()).filter((pid) => pid !== first), { timeout: 15_000, interval: 50 }).toHaveLength(1);
      await sleep(300);
      const id = await enqueueJob(type, {}, {}, other.db);
      await expect.poll(() => started.length, { timeout: WOKEN_MS, interval: 20 }).toBe(1);
      expect((await getJob(id))!.status).toBe("done");
    } finally {
      await runner.stop();
    }
  });

  it("holds one LISTEN session per process whatever its runners, and closes it with the last one", async () => {
    await expect.poll(() => listening(), { timeout: WOKEN_MS, interval: 50 }).toEqual([]);
    const a = startRunner(idle, { pollMs: SLOW_POLL_MS });
    const b = startRunner(idle, { pollMs: SLOW_POLL_MS });
    await expect.poll(() => listening(), { timeout: 15_000, interval: 50 }).toHaveLength(1);
    await a.stop();
    await sleep(200);
    expect(await listening()).toHaveLength(1);
    await b.stop();
    await expect.poll(() => listening(), { timeout: WOKEN_MS, interval: 50 }).toEqual([]);
  });

  it("a `koala worker` process LISTENs, and on SIGTERM closes its session and exits by itself", { timeout: 90_000 }, async () => {
    const app = `koala-worker-${randomBytes(4).toString("hex")}`;
    const env = {
      ...process.env,
      DATA_DIR: t.dataDir,
      DATABASE_URL: named(t.url, app),
      KOALA_ENV: "development",
      DEMO_SEED: "off",
      LOG_LEVEL: "warn",
    };
    // node itself (tsx as a loader), not the tsx launcher: the signal reaches the worker, not a parent relaying it.
    const child = spawn(process.execPath, ["--import", "tsx", "cli/koala.ts", "worker"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await expect.poll(() => listening(app), { timeout: 60_000, interval: 100 }).toHaveLength(1);
      child.kill("SIGTERM");
      // No process.exit on this path: the process ends once nothing holds it open, the LISTEN session included.
      const code = await Promise.race([exited, sleep(20_000).then(() => "still running")]);
      expect(code, output).toBe(0);
      await expect.poll(() => listening(app), { timeout: WOKEN_MS, interval: 50 }).toEqual([]);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
