import { sql, type UpdateQueryBuilder, type UpdateResult } from "kysely";
import { config } from "~/config.server";
import { conn, db, dialect, type DB } from "~/db/connection.server";
import type { Listener } from "~/db/listener.server";
import type { Database, Job } from "~/db/schema";
import { metrics } from "~/lib/metrics.server";

/**
 * A running job whose lease (`JOB_LEASE_SECONDS`) ran out without being renewed is taken to belong to a dead worker
 * and is handed out again; its runner renews it every fifth of that while the job runs.
 */
export const jobLeaseMs = () => config().jobLeaseMs;

/** The lease a worker holds on a job it claimed: its worker and its attempt. Only the holder may finish it. */
export type Lease = Pick<Job, "id" | "locked_by" | "attempts">;

type JobOptions = {
  runAt?: number;
  maxAttempts?: number;
  ownerUserId?: number | null;
  total?: number | null;
  /** Started through the API with this token. */
  apiTokenId?: number | null;
};

/** A queued job's row, as every way of queueing writes it. */
function queuedRow(type: string, payload: unknown, opts: JobOptions, uniqueKey: string | null) {
  const now = Date.now();
  return {
    type,
    payload: JSON.stringify(payload),
    status: "queued" as const,
    attempts: 0,
    max_attempts: opts.maxAttempts ?? 5,
    run_at: opts.runAt ?? now,
    locked_at: null,
    locked_by: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    owner_user_id: opts.ownerUserId ?? null,
    total: opts.total ?? null,
    unique_key: uniqueKey,
    api_token_id: opts.apiTokenId ?? null,
  };
}

/**
 * Queues a job under a key no other job may share (a daily job's type and day): false when one with that key exists
 * already, so two instances queueing the same run at the same moment make one.
 */
export async function enqueueJobOnce(type: string, uniqueKey: string, payload: unknown, opts: { runAt?: number } = {}): Promise<boolean> {
  const values = queuedRow(type, payload, opts, uniqueKey);
  const row = await db()
    .insertInto("jobs")
    .values(values)
    .onConflict((oc) => oc.column("unique_key").doNothing())
    .returning("id")
    .executeTakeFirst();
  if (row) await announceDue(values.run_at);
  return row !== undefined;
}

export async function enqueueJob(
  type: string,
  payload: unknown,
  opts: JobOptions = {},
  /** A transaction, so that the job is queued (and announced) exactly when the change that needs it commits. */
  executor: DB = db(),
): Promise<number> {
  const values = queuedRow(type, payload, opts, null);
  const row = await executor.insertInto("jobs").values(values).returning("id").executeTakeFirstOrThrow();
  await announceDue(values.run_at, executor);
  return row.id;
}

/** PostgreSQL's channel on which queued work is announced, and which each process with a runner LISTENs to. */
const JOBS_CHANNEL = "koala_jobs";

/**
 * PostgreSQL: wakes the idle runners of every instance (NOTIFY), for a job due now; a job due later waits for their
 * polls. Sent inside `executor`'s transaction, a notification goes out when it commits, so no runner is woken
 * before it can see the job (and several in one transaction are delivered as one). Its payload is the jobs table's
 * schema: channels are the database's, and another Koala in another schema of it announces on the same one.
 * SQLite: nothing; runners poll.
 */
async function announceDue(runAt: number, executor: DB = db()) {
  if (dialect() === "postgres" && runAt <= Date.now()) await sql`select pg_notify(${JOBS_CHANNEL}, current_schema())`.execute(executor);
}

/**
 * Calls `onQueued` whenever work is announced in this database's schema, and whenever the session that hears it is
 * (re-)established (PostgreSQL: a session LISTENing on the jobs' channel, apart from the pool); null on SQLite,
 * whose runners poll.
 */
export function listenForJobs(onQueued: () => void): Listener | null {
  const { db: pool, listen } = conn();
  if (!listen) return null;
  let schema: string | undefined;
  void sql<{ schema: string }>`select current_schema() as schema`.execute(pool).then(
    (r) => (schema = r.rows[0]?.schema),
    () => {},
  );
  // Until the schema is known, every announcement wakes: a look too many costs a query, one too few a poll.
  return listen(JOBS_CHANNEL, (payload) => (payload === null || schema === undefined || payload === schema) && onQueued());
}

/**
 * Claims the next due job for a worker. PostgreSQL: FOR UPDATE SKIP LOCKED, so workers never
 * wait on each other. SQLite: the immediate transaction serialises claimers. A job whose worker died on its last
 * attempt is failed for good on the way, and `onAbandoned` told of it (its kind may have something to clean up).
 */
export async function claimJob(
  workerId: string,
  types?: string[],
  onAbandoned?: (job: Pick<Job, "id" | "type" | "payload">) => Promise<void>,
): Promise<Job | null> {
  const now = Date.now();
  const abandoned: Pick<Job, "id" | "type" | "payload">[] = [];
  const claimed = await db()
    .transaction()
    .execute(async (trx) => {
      for (;;) {
        let q = trx
          .selectFrom("jobs")
          .select(["id", "type", "status", "attempts", "max_attempts", "payload"])
          .where((eb) =>
            eb.or([
              eb.and([eb("status", "=", "queued"), eb("run_at", "<=", now)]),
              eb.and([eb("status", "=", "running"), eb("locked_at", "<", now - jobLeaseMs())]),
            ]),
          )
          .orderBy("run_at")
          .orderBy("id")
          .limit(1);
        if (types?.length) q = q.where("type", "in", types);
        if (dialect() === "postgres") q = q.forUpdate().skipLocked();
        const next = await q.executeTakeFirst();
        if (!next) return null;
        // Its worker died on the last allowed attempt: failed, not run again (its attempts are spent).
        if (next.status === "running" && next.attempts >= next.max_attempts) {
          await trx
            .updateTable("jobs")
            .set({ status: "failed", last_error: "The worker running it stopped.", locked_at: null, locked_by: null, updated_at: now })
            .where("id", "=", next.id)
            .execute();
          metrics().jobFailures.inc({ type: next.type });
          abandoned.push({ id: next.id, type: next.type, payload: next.payload });
          continue;
        }
        return trx
          .updateTable("jobs")
          .set({ status: "running", locked_at: now, locked_by: workerId, attempts: sql`attempts + 1`, updated_at: now })
          .where("id", "=", next.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      }
    });
  // Told once the transaction has committed: the job is failed for good by then, whatever its handler does.
  for (const job of abandoned) await onAbandoned?.(job);
  return claimed;
}

/**
 * Marks a job done, with what it achieved, and drops its payload: a finished mail job must not keep a sign-in link
 * in the database. Only while `lease` still holds it (its worker and attempt): a worker whose lease ran out and whose
 * job was handed to another changes nothing. Returns whether it held the lease.
 */
export async function completeJob(lease: Lease, result?: unknown): Promise<boolean> {
  const { numUpdatedRows } = await heldBy(
    lease,
    db()
      .updateTable("jobs")
      .set({
        status: "done",
        payload: "null",
        locked_at: null,
        locked_by: null,
        last_error: null,
        updated_at: Date.now(),
        result: result === undefined ? null : JSON.stringify(result),
        checkpoint: null,
      }),
  ).executeTakeFirst();
  return numUpdatedRows > 0n;
}

/** An update of the job that `lease` names, while that lease still holds it. */
function heldBy<Q extends UpdateQueryBuilder<Database, "jobs", "jobs", UpdateResult>>(lease: Lease, q: Q): Q {
  return q
    .where("id", "=", lease.id)
    .where("status", "=", "running")
    .where("locked_by", "=", lease.locked_by)
    .where("attempts", "=", lease.attempts) as Q;
}

/**
 * Hands a running job back, unfinished, for another worker to take at once (a runner stopping before its job is
 * done): queued again, due now, the attempt not counted, and announced to the other instances' runners. Only while
 * `lease` still holds it.
 */
export async function releaseJob(lease: Lease): Promise<boolean> {
  const now = Date.now();
  const { numUpdatedRows } = await heldBy(
    lease,
    db()
      .updateTable("jobs")
      .set({ status: "queued", run_at: now, locked_at: null, locked_by: null, attempts: sql`attempts - 1`, updated_at: now }),
  ).executeTakeFirst();
  if (numUpdatedRows === 0n) return false;
  await announceDue(now);
  return true;
}

/**
 * Records where a running job's next attempt resumes (and renews its lease), while `lease` still holds it; inside the
 * transaction that commits the work it describes when given one, so that the work and its checkpoint commit together.
 * False when the lease is lost: the job was handed to another worker, and this one must stop.
 */
export async function saveJobCheckpoint(lease: Lease, checkpoint: unknown, executor: Pick<DB, "updateTable"> = db()): Promise<boolean> {
  const now = Date.now();
  const { numUpdatedRows } = await executor
    .updateTable("jobs")
    .set({ checkpoint: JSON.stringify(checkpoint), locked_at: now, updated_at: now })
    .where("id", "=", lease.id)
    .where("status", "=", "running")
    .where("locked_by", "=", lease.locked_by)
    .where("attempts", "=", lease.attempts)
    .executeTakeFirst();
  return numUpdatedRows > 0n;
}

/** Keeps a running job's lease while its worker is alive (renewed on a timer by the runner). */
export async function renewJobLease(id: number, workerId: string) {
  await db()
    .updateTable("jobs")
    .set({ locked_at: Date.now() })
    .where("id", "=", id)
    .where("status", "=", "running")
    .where("locked_by", "=", workerId)
    .execute();
}

/** A long job's progress (work done of its total); also renews its lease. */
export async function setJobProgress(id: number, progress: number, total?: number) {
  const now = Date.now();
  await db()
    .updateTable("jobs")
    .set({ progress, ...(total !== undefined ? { total } : {}), locked_at: now, updated_at: now })
    .where("id", "=", id)
    .execute();
}

export interface JobStatus {
  id: number;
  type: string;
  status: "queued" | "running" | "done" | "failed";
  progress: number;
  total: number | null;
  result: unknown;
}

/**
 * A job's state for the person who started it; null for anyone else (their 404). Through the API (`tokenId`), only
 * for the token that started it: a token narrowed to some projects never sees what another of its owner's did.
 */
export async function jobOf(ownerUserId: number, id: number, tokenId?: number): Promise<JobStatus | null> {
  let q = db()
    .selectFrom("jobs")
    .select(["id", "type", "status", "progress", "total", "result"])
    .where("id", "=", id)
    .where("owner_user_id", "=", ownerUserId);
  if (tokenId !== undefined) q = q.where("api_token_id", "=", tokenId);
  const row = await q.executeTakeFirst();
  return row ? { ...row, result: row.result ? (JSON.parse(row.result) as unknown) : null } : null;
}

/** Exponential backoff: 5 s, 10 s, 20 s … capped at an hour; after the last attempt the job is failed. */
export function backoffMs(attempts: number) {
  return Math.min(3_600_000, 5_000 * 2 ** Math.max(0, attempts - 1));
}

/**
 * A failed attempt: queued again after its backoff, or failed for good after the last (or at once, `final`). Only
 * while `job`'s lease holds.
 */
export async function failJob(job: Job, error: string, opts: { final?: boolean } = {}): Promise<boolean> {
  const now = Date.now();
  const final = opts.final || job.attempts >= job.max_attempts;
  const { numUpdatedRows } = await heldBy(
    job,
    db()
      .updateTable("jobs")
      .set({
        status: final ? "failed" : "queued",
        run_at: final ? job.run_at : now + backoffMs(job.attempts),
        locked_at: null,
        locked_by: null,
        last_error: error.slice(0, 2000),
        updated_at: now,
      }),
  ).executeTakeFirst();
  return numUpdatedRows > 0n;
}

export async function getJob(id: number): Promise<Job | undefined> {
  return db().selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function pruneJobs(olderThanMs = 7 * 86_400_000) {
  await db()
    .deleteFrom("jobs")
    .where("status", "=", "done")
    .where("updated_at", "<", Date.now() - olderThanMs)
    .execute();
}

/** Whether a job of this type is waiting or running (for jobs that queue their own next run). */
export async function hasPendingJob(type: string, opts: { queuedOnly?: boolean } = {}): Promise<boolean> {
  const row = await db()
    .selectFrom("jobs")
    .select("id")
    .where("type", "=", type)
    .where("status", "in", opts.queuedOnly ? ["queued"] : ["queued", "running"])
    .executeTakeFirst();
  return Boolean(row);
}

/** Which of these jobs are still queued or running (their files in DATA_DIR/tmp are kept). */
export async function pendingJobIds(ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db()
    .selectFrom("jobs")
    .select("id")
    .where("id", "in", [...new Set(ids)])
    .where("status", "in", ["queued", "running"])
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * The queue by type, for /metrics at each scrape: jobs due and waiting (with the earliest due time), and jobs running.
 * One grouped query over the (status, run_at) index; jobs queued for later (tomorrow's daily run, a retry's backoff)
 * are not waiting yet, and done or failed ones are not read.
 */
export async function jobQueueStats(
  now = Date.now(),
): Promise<{ type: string; status: "queued" | "running"; count: number; oldestDue: number }[]> {
  const rows = await db()
    .selectFrom("jobs")
    .select(["type", "status", (eb) => eb.fn.countAll<number>().as("count"), (eb) => eb.fn.min<number>("run_at").as("oldestDue")])
    .where((eb) => eb.or([eb("status", "=", "running"), eb.and([eb("status", "=", "queued"), eb("run_at", "<=", now)])]))
    .groupBy(["type", "status"])
    .execute();
  return rows.map((r) => ({
    type: r.type,
    status: r.status as "queued" | "running",
    count: Number(r.count),
    oldestDue: Number(r.oldestDue),
  }));
}
