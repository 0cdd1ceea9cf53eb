import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { loadConfig, setConfig } from "~/config.server";
import { backoffMs, claimJob, completeJob, enqueueJob, failJob, getJob, jobLeaseMs, releaseJob, renewJobLease } from "~/models/jobs.server";
import { JOB_TYPES } from "~/lib/job-types";
import { jobRegistry } from "~/services/job-registry.server";
import { dailyJob, defineJob, JobCannotSucceed, ensureDailyJob, runOnce, startRunner, wakeRunners } from "~/services/jobs.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";

describe.each(dialects)("durable job queue (%s)", (dialect) => {
  let t: TestDatabase;
  let configEnv: Record<string, string>;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    configEnv = { DATA_DIR: t.dataDir, KOALA_ENV: "development", DEMO_SEED: "off", LOG_LEVEL: "error" };
  });
  afterAll(() => t.drop());

  it("hands each job to exactly one of many concurrent claimers", async () => {
    const type = `claim-${dialect}`;
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => enqueueJob(type, { i })));
    const claimed: number[] = [];
    await Promise.all(
      Array.from({ length: 5 }, async (_, w) => {
        for (;;) {
          const job = await claimJob(`w${w}`, [type]);
          if (!job) return;
          claimed.push(job.id);
        }
      }),
    );
    expect(claimed.sort((a, b) => a - b)).toEqual(ids.sort((a, b) => a - b));
  });

  it("a daily job is queued once for the next UTC midnight, queues its own next run, and two queued at once become one", async () => {
    const type = `daily-${dialect}`;
    let runs = 0;
    const registry = {
      [type]: dailyJob(type, async () => {
        runs += 1;
      }),
    };
    const ensure = () => ensureDailyJob(type);
    const queued = () => db().selectFrom("jobs").select(["id", "run_at"]).where("type", "=", type).where("status", "=", "queued").execute();
    await ensure();
    await ensure();
    const [first, ...more] = await queued();
    expect(more).toEqual([]);
    expect(Number(first!.run_at) % 86_400_000).toBe(0);
    expect(Number(first!.run_at)).toBeGreaterThan(Date.now());

    // As an older version's two instances could leave it (no key on the second): both due now, today's run.
    await enqueueJob(type, {});
    const today = new Date().toISOString().slice(0, 10);
    await db()
      .updateTable("jobs")
      .set((eb) => ({
        run_at: Date.now() - 1,
        unique_key: eb.case().when("unique_key", "is not", null).then(`${type}@${today}`).else(null).end(),
      }))
      .where("type", "=", type)
      .execute();
    while (await runOnce(registry, "w")) {
      /* run everything due */
    }
    expect(runs).toBe(2);
    const next = await queued();
    expect(next).toHaveLength(1);
    expect(Number(next[0]!.run_at)).toBeGreaterThan(Date.now());
  });

  it("retries a failing job with backoff, then marks it failed", async () => {
    let calls = 0;
    const registry = {
      [`flaky-${dialect}`]: defineJob(async () => {
        calls += 1;
        throw new Error("SMTP said no");
      }),
    };
    const id = await enqueueJob(`flaky-${dialect}`, {}, { maxAttempts: 2 });
    expect(await runOnce(registry, "w")).toBe(true);
    let job = await getJob(id);
    expect(job).toMatchObject({ status: "queued", attempts: 1, last_error: "SMTP said no" });
    expect(job!.run_at).toBeGreaterThan(Date.now() + backoffMs(1) - 2000);
    await db().updateTable("jobs").set({ run_at: Date.now() }).where("id", "=", id).execute();
    expect(await runOnce(registry, "w")).toBe(true);
    job = await getJob(id);
    expect(job).toMatchObject({ status: "failed", attempts: 2 });
    expect(calls).toBe(2);
  });

  it("hands a job whose worker died back out after the lease", async () => {
    const type = `lease-${dialect}`;
    const id = await enqueueJob(type, {});
    expect((await claimJob("dead", [type]))?.id).toBe(id);
    expect(await claimJob("other", [type])).toBeNull();
    await db()
      .updateTable("jobs")
      .set({ locked_at: Date.now() - 10 * 60_000 })
      .where("id", "=", id)
      .execute();
    expect((await claimJob("other", [type]))?.id).toBe(id);
  });

  it("fails a job whose worker died on its last allowed attempt instead of running it again", async () => {
    const type = `once-${dialect}`;
    const id = await enqueueJob(type, {}, { maxAttempts: 1 });
    expect((await claimJob("dead", [type]))?.id).toBe(id);
    await db()
      .updateTable("jobs")
      .set({ locked_at: Date.now() - 10 * 60_000 })
      .where("id", "=", id)
      .execute();
    expect(await claimJob("other", [type])).toBeNull();
    expect(await getJob(id)).toMatchObject({ status: "failed", attempts: 1, last_error: "The worker running it stopped." });
  });

  it("renews a running job's lease for its own worker only", async () => {
    const type = `renew-${dialect}`;
    const id = await enqueueJob(type, {});
    await claimJob("alive", [type]);
    const old = Date.now() - 4 * 60_000;
    await db().updateTable("jobs").set({ locked_at: old }).where("id", "=", id).execute();
    await renewJobLease(id, "someone-else");
    expect((await getJob(id))!.locked_at).toBe(old);
    await renewJobLease(id, "alive");
    expect((await getJob(id))!.locked_at).toBeGreaterThan(Date.now() - 5_000);
  });

  it("runs one long job at a time and keeps the runner's other slot for short jobs", async () => {
    const started: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const short: number[] = [];
    const registry = {
      [`long-${dialect}`]: defineJob(
        async ({ n }: { n: number }) => {
          started.push(n);
          await gate;
        },
        { long: true },
      ),
      [`short-${dialect}`]: defineJob(async ({ n }: { n: number }) => void short.push(n)),
    };
    const first = await enqueueJob(`long-${dialect}`, { n: 1 });
    const second = await enqueueJob(`long-${dialect}`, { n: 2 });
    const runner = startRunner(registry, { pollMs: 20, concurrency: 2 });
    try {
      await expect.poll(() => started.length, { timeout: 15_000, interval: 20 }).toBe(1);
      await enqueueJob(`short-${dialect}`, { n: 3 });
      wakeRunners();
      await expect.poll(() => short, { timeout: 15_000, interval: 20 }).toEqual([3]);
      // The free slot took the short job and left the second long one waiting.
      expect(started).toEqual([1]);
      expect((await getJob(second))!.status).toBe("queued");
      release();
      await expect.poll(async () => (await getJob(second))!.status, { timeout: 15_000, interval: 20 }).toBe("done");
      expect((await getJob(first))!.status).toBe("done");
    } finally {
      release();
      await runner.stop();
    }
  });

  it("stops a runner's idle slots at once, however long their poll, all of them", async () => {
    const runner = startRunner({ [`idle-${dialect}`]: defineJob(async () => {}) }, { pollMs: 60_000, concurrency: 3 });
    await new Promise((r) => setTimeout(r, 300));
    const stopping = Date.now();
    await runner.stop();
    expect(Date.now() - stopping).toBeLessThan(5_000);
  });

  it("runs queued work in the background runner and clears the payload when done", async () => {
    const seen: unknown[] = [];
    const registry = { [`ok-${dialect}`]: defineJob(async (p: unknown) => void seen.push(p)) };
    const runner = startRunner(registry, { pollMs: 50 });
    const id = await enqueueJob(`ok-${dialect}`, { secret: "link" });
    wakeRunners();
    // Waits for the runner, not a fixed time: a loaded machine may take seconds to get to it.
    await expect.poll(() => seen.length, { timeout: 15_000, interval: 20 }).toBe(1);
    await runner.stop();
    expect(seen).toEqual([{ secret: "link" }]);
    expect(await getJob(id)).toMatchObject({ status: "done", payload: "null" });
  });

  it("a runner claims only the kinds of job its registry holds, and the app's registry holds every kind the app queues", async () => {
    expect(Object.keys(jobRegistry).sort()).toEqual([...JOB_TYPES].sort());
    const known = `known-${dialect}`;
    const unknown = `unknown-${dialect}`;
    const ran: string[] = [];
    const registry = { [known]: defineJob(async () => void ran.push(known)) };
    const stranger = await enqueueJob(unknown, {});
    const mine = await enqueueJob(known, {});
    while (await runOnce(registry, "w"));
    expect(ran).toEqual([known]);
    expect((await getJob(mine))!.status).toBe("done");
    // Left for a runner that knows it (another version of the app, say), not failed.
    expect(await getJob(stranger)).toMatchObject({ status: "queued", attempts: 0 });
  });

  it("a runner slot with no kind of job of its own (long kinds only, in a short slot) claims nothing", async () => {
    const other = await enqueueJob(`other-${dialect}`, {});
    const registry = { [`long-only-${dialect}`]: defineJob(async () => {}, { long: true }) };
    expect(await runOnce(registry, "w", { slot: 1 })).toBe(false);
    expect(await getJob(other)).toMatchObject({ status: "queued", attempts: 0 });
  });

  it("runs a kind with slots of its own only there: a shared slot leaves it queued and runs the others, its own slot runs it alone", async () => {
    const heavy = `heavy-${dialect}`;
    const light = `light-${dialect}`;
    const ran: string[] = [];
    const registry = {
      [heavy]: defineJob(async () => void ran.push(heavy), { slots: () => 1 }),
      [light]: defineJob(async () => void ran.push(light)),
    };
    const heavyJob = await enqueueJob(heavy, {});
    // The heavy kind's own slot takes only it; a shared slot (even the first) takes only the others.
    const lightJob = await enqueueJob(light, {});
    expect(await runOnce(registry, "w", { kind: heavy })).toBe(true);
    expect(ran).toEqual([heavy]);
    const another = await enqueueJob(heavy, {});
    expect(await runOnce(registry, "w", { slot: 0 })).toBe(true);
    expect(ran).toEqual([heavy, light]);
    expect(await runOnce(registry, "w", { slot: 0 })).toBe(false);
    expect(await getJob(another)).toMatchObject({ status: "queued", attempts: 0 });
    expect(await runOnce(registry, "w", { kind: heavy })).toBe(true);
    expect((await getJob(heavyJob))!.status).toBe("done");
    expect((await getJob(lightJob))!.status).toBe("done");
  });

  it("gives each kind with slots its own slots in a running runner, beside the shared ones: its backlog holds up nothing else", async () => {
    const heavy = `backlog-${dialect}`;
    const mail = `urgent-${dialect}`;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const registry = {
      [heavy]: defineJob(() => gate, { slots: () => 1 }),
      [mail]: defineJob(async () => {}),
    };
    const backlog = await Promise.all(Array.from({ length: 5 }, () => enqueueJob(heavy, {})));
    const urgent = await enqueueJob(mail, {});
    const runner = startRunner(registry, { pollMs: 50, concurrency: 2 });
    try {
      await expect.poll(async () => (await getJob(urgent))!.status, { timeout: 5000 }).toBe("done");
      // One heavy job at a time, in its own slot; the rest wait for it, and the shared slots never take them.
      const states = async () => Promise.all(backlog.map(async (id) => (await getJob(id))!.status));
      await expect.poll(async () => (await states()).filter((s) => s === "running").length, { timeout: 5000 }).toBe(1);
      await new Promise((r) => setTimeout(r, 200));
      expect((await states()).filter((s) => s === "queued")).toHaveLength(4);
    } finally {
      release();
      await runner.stop();
    }
  });

  it("fails a job that cannot succeed (JobCannotSucceed) for good on its first attempt, without retries", async () => {
    const type = `hopeless-${dialect}`;
    let tries = 0;
    const registry = {
      [type]: defineJob(async () => {
        tries += 1;
        throw new JobCannotSucceed("The file is damaged.");
      }),
    };
    const id = await enqueueJob(type, {}, { maxAttempts: 5 });
    while (await runOnce(registry, "w"));
    expect(tries).toBe(1);
    expect(await getJob(id)).toMatchObject({ status: "failed", attempts: 1, last_error: "The file is damaged." });
  });

  it("lets only the lease holder finish a job: a worker whose lease ran out, its job taken by another, changes nothing", async () => {
    const type = `fenced-${dialect}`;
    const id = await enqueueJob(type, {});
    const first = (await claimJob("slow", [type]))!;
    await db()
      .updateTable("jobs")
      .set({ locked_at: Date.now() - jobLeaseMs() - 1000 })
      .where("id", "=", id)
      .execute();
    const second = (await claimJob("fast", [type]))!;
    expect(second).toMatchObject({ id, locked_by: "fast", attempts: 2 });
    // The first worker wakes up and reports: neither its result nor its failure is taken.
    expect(await completeJob(first, { from: "slow" })).toBe(false);
    expect(await failJob(first, "slow failed")).toBe(false);
    expect(await releaseJob(first)).toBe(false);
    expect(await getJob(id)).toMatchObject({ status: "running", locked_by: "fast", last_error: null, result: null });
    expect(await completeJob(second, { from: "fast" })).toBe(true);
    expect(await getJob(id)).toMatchObject({ status: "done", result: JSON.stringify({ from: "fast" }) });
  });

  it("queues one daily run however many instances ask for it at the same moment", async () => {
    const type = `daily-race-${dialect}`;
    await Promise.all(Array.from({ length: 6 }, () => ensureDailyJob(type)));
    const rows = await db().selectFrom("jobs").select(["run_at", "unique_key"]).where("type", "=", type).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.unique_key).toBe(`${type}@${new Date(Number(rows[0]!.run_at)).toISOString().slice(0, 10)}`);
  });

  it("hands back a job still running when its runner stops after the grace, for another worker to take at once", async () => {
    const type = `stopping-${dialect}`;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const registry = {
      [type]: defineJob(async () => {
        started = true;
        await gate;
        return "late";
      }),
    };
    const id = await enqueueJob(type, {});
    const runner = startRunner(registry, { pollMs: 20, concurrency: 1 });
    await expect.poll(() => started, { timeout: 15_000, interval: 20 }).toBe(true);
    await runner.stop({ graceMs: 100 });
    const handedBack = (await getJob(id))!;
    expect(handedBack).toMatchObject({ status: "queued", attempts: 0, locked_by: null });
    expect(handedBack.run_at).toBeLessThanOrEqual(Date.now());
    const taken = (await claimJob("successor", [type]))!;
    expect(taken).toMatchObject({ id, attempts: 1 });
    // The stopped runner's handler finishing late does not overwrite the successor's run.
    release();
    await new Promise((r) => setTimeout(r, 100));
    expect(await getJob(id)).toMatchObject({ status: "running", locked_by: "successor" });
  });

  it("takes the lease length from JOB_LEASE_SECONDS", async () => {
    setConfig(loadConfig({ ...configEnv, JOB_LEASE_SECONDS: "5" }));
    try {
      const type = `lease-setting-${dialect}`;
      const id = await enqueueJob(type, {});
      await claimJob("gone", [type]);
      const lockedAgo = (ms: number) =>
        db()
          .updateTable("jobs")
          .set({ locked_at: Date.now() - ms })
          .where("id", "=", id)
          .execute();
      await lockedAgo(4_000);
      expect(await claimJob("other", [type])).toBeNull();
      await lockedAgo(6_000);
      expect((await claimJob("other", [type]))?.id).toBe(id);
    } finally {
      setConfig(loadConfig(configEnv));
    }
  });
});
