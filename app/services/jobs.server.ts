import { hostname } from "node:os";
import { randomToken } from "~/lib/crypto.server";
import { log } from "~/lib/log.server";
import { metrics } from "~/lib/metrics.server";
import type { Job } from "~/db/schema";
import type { JobType } from "~/lib/job-types";
import { onWake, wakeRunners } from "./job-wakeups.server";
import {
  claimJob,
  completeJob,
  enqueueJob,
  enqueueJobOnce,
  failJob,
  hasPendingJob,
  jobLeaseMs,
  releaseJob,
  renewJobLease,
  type Lease,
} from "~/models/jobs.server";

export { wakeRunners };

/**
 * A kind of job: its work (what it returns is kept as the job's result, for the person who started it), and whether
 * it may run for hours (a WSC re-import): a long job never takes more than one slot of a runner, so short jobs keep
 * moving. The runner is given every kind in one map (job-registry.server.ts); nothing registers itself on import.
 */
export interface JobDefinition<P = any> {
  run: (payload: P, job: Job) => Promise<unknown>;
  long?: boolean;
  /**
   * Runs in slots of its own, this many in each runner, and never in the runner's shared slots: a heavy kind with a
   * backlog (OCR after a big import) neither holds the slots mail, bulk work and re-imports need, nor waits behind them.
   */
  slots?: () => number;
  /**
   * Its worker died on the job's last attempt, so it is failed for good without a handler to finish it: what the
   * handler would have cleaned up or told on its way out (stored uploads, the owner's e-mail) is done here.
   */
  abandoned?: (payload: P, jobId: number) => Promise<void>;
}
export type JobRegistry = Readonly<Record<string, JobDefinition>>;

export const defineJob = <P>(
  run: JobDefinition<P>["run"],
  opts: Pick<JobDefinition<P>, "long" | "slots" | "abandoned"> = {},
): JobDefinition<P> => ({ run, ...opts });

/**
 * What the job was given cannot work however often it is tried (a damaged file): failed for good at once, not
 * retried after its backoff.
 */
export class JobCannotSucceed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobCannotSucceed";
  }
}

/** A job's lease ran out and another worker took it: this one stops, and leaves the job (and what it holds) alone. */
export class LeaseLost extends Error {
  constructor(id: number) {
    super(`Job ${id} was handed to another worker (its lease ran out)`);
  }
}

const nextDay = (now: number) => Math.floor(now / 86_400_000) * 86_400_000 + 86_400_000;

/** Work done once a day, just after midnight UTC (the digests): the job queues its next run itself. */
export function dailyJob(type: string, work: () => Promise<unknown>): JobDefinition<Record<string, never>> {
  return defineJob(async () => {
    await work();
    // Two instances' housekeeping can queue one each at the same moment; the next day has one again.
    if (!(await hasPendingJob(type, { queuedOnly: true }))) await enqueueDaily(type);
  });
}

/** What housekeeping calls every hour: a daily job is queued (after a first start, or a run that failed for good). */
export async function ensureDailyJob(type: string) {
  if (await hasPendingJob(type)) return;
  await enqueueDaily(type).catch((err: unknown) => log.warn("daily job not queued", { type, error: String(err) }));
}
/** Tomorrow's run, keyed by its type and day: however many instances ask at once, one row. */
const enqueueDaily = (type: string) => {
  const runAt = nextDay(Date.now());
  return enqueueJobOnce(type, `${type}@${new Date(runAt).toISOString().slice(0, 10)}`, {}, { runAt });
};

/**
 * Queues durable work; a runner in this process is woken at once instead of at its next poll (on PostgreSQL, those of
 * other instances too: the job is announced).
 */
export async function queue(type: JobType, payload: unknown, opts?: Parameters<typeof enqueueJob>[2]) {
  const id = await enqueueJob(type, payload, opts);
  wakeRunners();
  return id;
}

/**
 * The kinds a slot takes: one of a kind's own slots only that kind; a shared slot every kind without slots of its own,
 * a long one only in the first; no slot named (a drain, a test) every kind.
 */
function kindsFor(registry: JobRegistry, opts: { slot?: number; kind?: string }): string[] {
  if (opts.kind) return registry[opts.kind] ? [opts.kind] : [];
  if (opts.slot === undefined) return Object.keys(registry);
  return Object.keys(registry).filter((t) => !registry[t]!.slots && !(registry[t]!.long && opts.slot! > 0));
}

/**
 * Runs one claimed job of the kinds the slot takes (see kindsFor); returns false when there was nothing due.
 * Its lease is renewed every fifth of the lease while it runs, so a long handler is never taken for a dead
 * worker's; `running` holds its lease meanwhile (the runner hands back what is still running when it stops).
 */
export async function runOnce(
  registry: JobRegistry,
  workerId: string,
  opts: { slot?: number; kind?: string; running?: Set<Lease> } = {},
): Promise<boolean> {
  const types = kindsFor(registry, opts);
  // No kind for this slot (a registry of long jobs only, in a short slot): nothing to claim. claimJob without types
  // would take a job of any kind, one this registry has no handler for.
  if (!types.length) return false;
  const job = await claimJob(workerId, types, async (dead) => {
    await registry[dead.type]
      ?.abandoned?.(JSON.parse(dead.payload), dead.id)
      .catch((err: unknown) =>
        log.warn("abandoned job not cleaned up", { id: dead.id, type: dead.type, error: err instanceof Error ? err.message : String(err) }),
      );
  });
  if (!job) return false;
  const handler = registry[job.type]!.run;
  opts.running?.add(job);
  const renew = setInterval(
    () =>
      void renewJobLease(job.id, workerId).catch((err: unknown) =>
        log.warn("job lease not renewed", { id: job.id, error: err instanceof Error ? err.message : String(err) }),
      ),
    Math.floor(jobLeaseMs() / 5),
  );
  try {
    const result = await handler(JSON.parse(job.payload), job);
    if (await completeJob(job, result ?? undefined)) log.debug("job done", { id: job.id, type: job.type });
    else log.warn("job finished after its lease ended: its result is dropped", { id: job.id, type: job.type, attempt: job.attempts });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.warn("job failed", { id: job.id, type: job.type, attempt: job.attempts, error: message });
    const final = err instanceof JobCannotSucceed || job.attempts >= job.max_attempts;
    // Counted as failJob decides: failed for good after the last attempt (or one that cannot succeed), else queued again.
    if (await failJob(job, message, { final })) (final ? metrics().jobFailures : metrics().jobRetries).inc({ type: job.type });
  } finally {
    clearInterval(renew);
    opts.running?.delete(job);
  }
  return true;
}

export interface Runner {
  /**
   * Takes no more jobs and waits for those running, at most `graceMs`; what is still running then is handed back
   * (queued again, due now, the attempt not counted) for another worker to take at once.
   */
  stop(opts?: { graceMs?: number }): Promise<void>;
  /** Resolves once no job is due (tests, CLI). */
  drain(): Promise<void>;
}

/**
 * Polls for due jobs of the registry's kinds, `concurrency` at a time (and each kind with slots of its own in those),
 * until stopped; an idle slot is woken at once by
 * a job queued in this process or, on PostgreSQL, announced by any instance (job-wakeups.server.ts).
 */
export function startRunner(registry: JobRegistry, opts: { pollMs?: number; concurrency?: number } = {}): Runner {
  const workerId = `${hostname()}:${process.pid}:${randomToken(4)}`;
  const pollMs = opts.pollMs ?? 1000;
  let stopped = false;
  // Every slot asleep, each with its own timer: a wake-up (or the stop) must reach them all, not the last to sleep.
  const sleepers = new Set<() => void>();
  let wakes = 0;
  const wake = () => {
    wakes += 1;
    for (const sleeper of sleepers) sleeper();
  };
  const sleep = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, pollMs);
      sleepers.add(done);
    });
  const stopWaking = onWake(wake);
  const running = new Set<Lease>();
  let stopping: Promise<void> | undefined;

  // `concurrency` shared slots (the first also takes long kinds), then each kind's own slots (JobDefinition's `slots`).
  const loop = async ({ slot, kind }: { slot?: number; kind?: string }) => {
    while (!stopped) {
      const seen = wakes;
      let worked = false;
      try {
        worked = await runOnce(registry, workerId, { slot, kind, running });
      } catch (err) {
        log.error("job runner error", { error: err instanceof Error ? err.message : String(err) });
      }
      // A job announced while this slot was finding none (queued just after its look) is taken now, not a poll later.
      if (!worked && !stopped && wakes === seen) await sleep();
    }
  };
  const slots = [
    ...Array.from({ length: opts.concurrency ?? 2 }, (_, slot) => ({ slot })),
    ...Object.entries(registry).flatMap(([kind, def]) => Array.from({ length: def.slots?.() ?? 0 }, () => ({ kind }))),
  ];
  const loops = slots.map(loop);

  return {
    stop(opts = {}) {
      return (stopping ??= stopRunning(opts));
    },
    async drain() {
      while (await runOnce(registry, workerId));
    },
  };

  async function stopRunning({ graceMs = Infinity }: { graceMs?: number }) {
    stopped = true;
    // The process's LISTEN session closes with its last runner.
    const unlistened = stopWaking().catch((err: unknown) => log.warn("job wake-up session not closed", { error: String(err) }));
    wake();
    const finished = Promise.allSettled(loops).then(() => true);
    let timeout: NodeJS.Timeout | undefined;
    const inTime = Number.isFinite(graceMs)
      ? await Promise.race([finished, new Promise<boolean>((r) => (timeout = setTimeout(() => r(false), graceMs)))])
      : await finished;
    clearTimeout(timeout);
    if (!inTime)
      for (const lease of running) {
        const back = await releaseJob(lease).catch(() => false);
        log.warn("job handed back unfinished", { id: lease.id, handedBack: back });
      }
    await unlistened;
  }
}
