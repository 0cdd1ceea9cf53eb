import { hostname } from "node:os";
import { randomToken } from "~/lib/crypto.server";
import { log } from "~/lib/log.server";
import type { Job } from "~/db/schema";
import { claimJob, completeJob, enqueueJob, failJob, hasPendingJob, JOB_LEASE_MS, renewJobLease } from "~/models/jobs.server";

/** A job's work. What it returns is kept as the job's result (for the person who started it). */
export type JobHandler = (payload: any, job: Job) => Promise<unknown>;
const handlers = new Map<string, JobHandler>();
/** Types that may run for hours (a WSC re-import): never more than one slot of a runner, so short jobs keep moving. */
const longTypes = new Set<string>();

export function registerJob(type: string, handler: JobHandler, opts: { long?: boolean } = {}) {
  handlers.set(type, handler);
  if (opts.long) longTypes.add(type);
}

const nextDay = (now: number) => Math.floor(now / 86_400_000) * 86_400_000 + 86_400_000;

/**
 * Work done once a day, just after midnight UTC (the digests): the job queues its next run itself. Returns what
 * housekeeping calls every hour to make sure one is queued (after a first start, or a run that failed for good).
 */
export function registerDailyJob(type: string, work: () => Promise<unknown>) {
  registerJob(type, async () => {
    await work();
    // Two instances' housekeeping can queue one each at the same moment; the next day has one again.
    if (!(await hasPendingJob(type, { queuedOnly: true }))) await queue(type, {}, { runAt: nextDay(Date.now()) });
  });
  return async function ensureQueued() {
    if (await hasPendingJob(type)) return;
    await queue(type, {}, { runAt: nextDay(Date.now()) }).catch((err: unknown) =>
      log.warn("daily job not queued", { type, error: String(err) }),
    );
  };
}

/** A running job's lease is renewed this often, so a long handler is never taken for a dead worker's. */
const RENEW_MS = Math.floor(JOB_LEASE_MS / 5);

const wakers = new Set<() => void>();

/** Queues durable work; a runner in this process is woken at once instead of at its next poll. */
export async function queue(
  type: string,
  payload: unknown,
  opts?: { runAt?: number; maxAttempts?: number; ownerUserId?: number | null; total?: number | null },
) {
  if (!handlers.has(type)) throw new Error(`No job handler registered for ${type}`);
  const id = await enqueueJob(type, payload, opts);
  wakeRunners();
  return id;
}

/** After a model queued a job inside its own transaction: run it now rather than at the next poll. */
export function wakeRunners() {
  for (const wake of wakers) wake();
}

/** Runs one claimed job (of any type, or only the short ones); returns false when there was nothing due. */
export async function runOnce(workerId: string, opts: { shortOnly?: boolean } = {}): Promise<boolean> {
  const types = [...handlers.keys()].filter((t) => !(opts.shortOnly && longTypes.has(t)));
  const job = await claimJob(workerId, types);
  if (!job) return false;
  const handler = handlers.get(job.type)!;
  const renew = setInterval(
    () =>
      void renewJobLease(job.id, workerId).catch((err: unknown) =>
        log.warn("job lease not renewed", { id: job.id, error: err instanceof Error ? err.message : String(err) }),
      ),
    RENEW_MS,
  );
  try {
    const result = await handler(JSON.parse(job.payload), job);
    await completeJob(job.id, result ?? undefined);
    log.debug("job done", { id: job.id, type: job.type });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.warn("job failed", { id: job.id, type: job.type, attempt: job.attempts, error: message });
    await failJob(job, message);
  } finally {
    clearInterval(renew);
  }
  return true;
}

export interface Runner {
  stop(): Promise<void>;
  /** Resolves once no job is due (tests, CLI). */
  drain(): Promise<void>;
}

/** Polls for due jobs, `concurrency` at a time, until stopped. */
export function startRunner(opts: { pollMs?: number; concurrency?: number } = {}): Runner {
  const workerId = `${hostname()}:${process.pid}:${randomToken(4)}`;
  const pollMs = opts.pollMs ?? 1000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let sleeping: (() => void) | undefined;
  const wake = () => sleeping?.();
  wakers.add(wake);

  // The first slot takes any job; the others only short ones (see registerJob's `long`).
  const loop = async (_: unknown, slot: number) => {
    while (!stopped) {
      let worked = false;
      try {
        worked = await runOnce(workerId, { shortOnly: slot > 0 });
      } catch (err) {
        log.error("job runner error", { error: err instanceof Error ? err.message : String(err) });
      }
      if (!worked && !stopped)
        await new Promise<void>((resolve) => {
          sleeping = resolve;
          timer = setTimeout(resolve, pollMs);
        });
    }
  };
  const loops = Array.from({ length: opts.concurrency ?? 2 }, loop);

  return {
    async stop() {
      stopped = true;
      wakers.delete(wake);
      clearTimeout(timer);
      wake();
      await Promise.allSettled(loops);
    },
    async drain() {
      while (await runOnce(workerId));
    },
  };
}
