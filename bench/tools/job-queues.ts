// Decision 0023's measurements, on PostgreSQL: how soon an idle second instance starts a job queued by the first
// (enqueue → start), what an idle instance costs the database, how fast one instance queues jobs, and how fast an
// instance runs through a backlog of small ones; for Koala's queue (1 s polling alone, and with LISTEN/NOTIFY),
// graphile-worker and pg-boss. The libraries are not Koala's dependencies: install them in a directory of their own.
//
//   mkdir /tmp/eval-jobs && cd /tmp/eval-jobs && npm init -y && npm install graphile-worker@0.17.3 pg-boss@10.4.2
//   EVAL_DIR=/tmp/eval-jobs npx tsx bench/tools/job-queues.ts [system …]   # koala-poll koala-listen graphile-worker pg-boss
//
// Each system gets a fresh database (koala_jobs_eval on BENCH_PG_URL's server, postgres://postgres@127.0.0.1:5432 by
// default). The worker is a separate process (the second instance: 4 jobs at once, 1 s poll); this process queues.
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

type System = "koala-poll" | "koala-listen" | "graphile-worker" | "pg-boss";
const SYSTEMS: System[] = ["koala-poll", "koala-listen", "graphile-worker", "pg-boss"];
const SERVER = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432";
const DATABASE = "koala_jobs_eval";
/** The server's URL with another database. */
const databaseUrl = (database: string) => Object.assign(new URL(SERVER), { pathname: `/${database}` }).href;
const URL_ = databaseUrl(DATABASE);
const ROUNDS = Number(process.env.ROUNDS ?? 40);
const WARMUP = 3;
const BACKLOG = Number(process.env.BACKLOG ?? 2000);
const CONCURRENCY = 4;
/** pg-boss fetches this many jobs per poll of each of its four loops (its way to throughput; 1 is the others' way). */
const PGBOSS_BATCH = Number(process.env.PGBOSS_BATCH ?? 1);
const POLL_MS = 1000;
const TYPE = "t";

const lib = () => createRequire(path.join(process.env.EVAL_DIR ?? "/tmp/eval-jobs", "package.json"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What one system offers both instances: queue a job (this one), run jobs (the worker), close. */
interface Side {
  enqueue(i: number): Promise<unknown>;
  work(onStart: (i: number) => void): Promise<void>;
  close(): Promise<void>;
}

async function side(system: System): Promise<Side> {
  if (system === "graphile-worker") {
    const gw = lib()("graphile-worker");
    const logger = new gw.Logger(() => () => {});
    const utils = await gw.makeWorkerUtils({ connectionString: URL_, logger });
    await utils.migrate();
    let runner: { stop(): Promise<void> } | undefined;
    return {
      enqueue: (i) => utils.addJob(TYPE, { i }),
      async work(onStart) {
        runner = await gw.run({
          connectionString: URL_,
          concurrency: CONCURRENCY,
          pollInterval: POLL_MS,
          noHandleSignals: true,
          logger,
          taskList: { [TYPE]: async (p: { i: number }) => onStart(p.i) },
        });
      },
      async close() {
        await runner?.stop();
        await utils.release();
      },
    };
  }
  if (system === "pg-boss") {
    const PgBoss = lib()("pg-boss");
    // The queuing instance supervises nothing, so that the idle figure is the worker's alone.
    const boss = new PgBoss({ connectionString: URL_, schedule: false, supervise: process.argv[2] === "--worker" });
    boss.on("error", () => {});
    await boss.start();
    await boss.createQueue(TYPE);
    return {
      enqueue: (i) => boss.send(TYPE, { i }),
      async work(onStart) {
        // A work() is one fetch loop; four of them run four jobs at once, as the others do.
        for (let k = 0; k < CONCURRENCY; k++)
          await boss.work(
            TYPE,
            { pollingIntervalSeconds: POLL_MS / 1000, batchSize: PGBOSS_BATCH },
            async (jobs: { data: { i: number } }[]) => {
              for (const job of jobs) onStart(job.data.i);
            },
          );
      },
      close: () => boss.stop({ graceful: false, wait: true }),
    };
  }
  const { loadConfig, setConfig } = await import("~/config.server");
  const { connect, setConnection } = await import("~/db/connection.server");
  const { migrateToLatest } = await import("~/db/migrations.server");
  const { enqueueJob } = await import("~/models/jobs.server");
  const { defineJob, startRunner } = await import("~/services/jobs.server");
  setConfig(loadConfig({ DATA_DIR: mkdtempSync(path.join(tmpdir(), "koala-eval-")), KOALA_ENV: "development", LOG_LEVEL: "error" }));
  const connection = connect({ dialect: "postgres", url: URL_ });
  await migrateToLatest(connection.db, "postgres");
  // koala-poll: the same queue with no LISTEN session (as on SQLite, or before this change): its runners poll alone.
  setConnection(system === "koala-poll" ? { ...connection, listen: undefined } : connection);
  let runner: { stop(): Promise<void> } | undefined;
  return {
    enqueue: (i) => enqueueJob(TYPE, { i }),
    async work(onStart) {
      runner = startRunner({ [TYPE]: defineJob(async (p: { i: number }) => onStart(p.i)) }, { pollMs: POLL_MS, concurrency: CONCURRENCY });
    },
    async close() {
      await runner?.stop();
      await connection.close();
    },
  };
}

// The second instance: runs jobs, and tells the first when each started.
if (process.argv[2] === "--worker") {
  const s = await side(process.argv[3] as System);
  await s.work((i) => process.send!({ i, t: Date.now() }));
  process.send!({ ready: true });
  process.on("message", async () => {
    await s.close();
    process.exit(0);
  });
} else {
  for (const system of process.argv.length > 2 ? (process.argv.slice(2) as System[]) : SYSTEMS) await measure(system);
}

async function measure(system: System) {
  await admin(`drop database if exists ${DATABASE} with (force)`);
  await admin(`create database ${DATABASE}`);
  const queuer = await side(system);
  const starts = new Map<number, number>();
  let worker = await startWorker(system, starts);

  // Idle: transactions per second the database runs for the idle worker instance (the queuing one runs none).
  const idle = await idleTransactions(20_000);

  // Enqueue → start, on the idle worker; a random pause first, so that a job lands anywhere in a poll interval. The
  // first WARMUP jobs are not counted (the first statements of a process, the first connections).
  const latencies: number[] = [];
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    await sleep(300 + Math.random() * 1000);
    const t0 = Date.now();
    await queuer.enqueue(i);
    const latency = (await startOf(starts, i, 10_000)) - t0;
    if (i >= WARMUP) latencies.push(latency);
  }

  // A backlog: queued one after another by this instance while no worker runs, then run by a fresh worker.
  await stopWorker(worker);
  const queueing = Date.now();
  for (let i = 0; i < BACKLOG; i++) await queuer.enqueue(WARMUP + ROUNDS + i);
  const enqueueMs = Date.now() - queueing;
  starts.clear();
  worker = await startWorker(system, starts);
  const last = await startOf(starts, WARMUP + ROUNDS + BACKLOG - 1, 600_000).then(async () => {
    while (starts.size < BACKLOG) await sleep(20);
    return Math.max(...starts.values());
  });
  const first = Math.min(...starts.values());
  await stopWorker(worker);
  await queuer.close();

  const sorted = [...latencies].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  console.log(
    JSON.stringify({
      system: system === "pg-boss" && PGBOSS_BATCH > 1 ? `pg-boss (batchSize ${PGBOSS_BATCH})` : system,
      latencyMs: { p50: q(0.5), p90: q(0.9), max: sorted.at(-1), mean: Math.round(sorted.reduce((a, b) => a + b, 0) / sorted.length) },
      idleTransactionsPerSecond: idle,
      enqueuePerSecond: Math.round((BACKLOG / enqueueMs) * 1000),
      backlogJobsPerSecond: Math.round(((BACKLOG - 1) / (last - first)) * 1000),
      ...(process.env.VERBOSE ? { latencies } : {}),
    }),
  );
}

function startWorker(system: System, starts: Map<number, number>) {
  const child = fork(fileURLToPath(import.meta.url), ["--worker", system], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise<ChildProcess>((resolve, reject) => {
    child.on("message", (m: { i?: number; t?: number; ready?: boolean }) => {
      if (m.ready) resolve(child);
      else if (m.i !== undefined && !starts.has(m.i)) starts.set(m.i, m.t!);
    });
    child.once("exit", (code) => reject(new Error(`worker exited (${code})`)));
  });
}

async function stopWorker(child: ChildProcess) {
  const exited = new Promise((r) => child.once("exit", r));
  child.send("stop");
  await Promise.race([exited, sleep(10_000).then(() => child.kill("SIGKILL"))]);
}

async function startOf(starts: Map<number, number>, i: number, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (!starts.has(i)) {
    if (Date.now() > until) throw new Error(`job ${i} not started within ${timeoutMs} ms`);
    await sleep(1);
  }
  return starts.get(i)!;
}

async function idleTransactions(ms: number) {
  const count = async () =>
    Number(
      (
        await adminQuery<{ n: string }>(
          `select pg_stat_force_next_flush(), xact_commit + xact_rollback as n from pg_stat_database where datname = '${DATABASE}'`,
          DATABASE,
        )
      )[0]!.n,
    );
  await sleep(1_500);
  const before = await count();
  await sleep(ms);
  return Math.round(((await count()) - before) / (ms / 1000));
}

async function admin(text: string) {
  await adminQuery(text);
}
async function adminQuery<R>(text: string, database = "postgres"): Promise<R[]> {
  const client = new pg.Client({ connectionString: databaseUrl(database) });
  await client.connect();
  try {
    return (await client.query(text)).rows as R[];
  } finally {
    await client.end();
  }
}
