import pg from "pg";
import { copyPgDataset, type Dataset } from "../lib/datasets";
import { startApp, type Server } from "../lib/server";
import { median } from "../lib/stats";
import type { Context, Metric } from "../lib/types";
import { runDatasetWorker } from "../lib/worker";

/** The lease the two instances run with: the product's default is 60 s; the wait after a crash scales with it. */
const LEASE_SECONDS = 10;
const PORTS = { a: 3963, b: 3964 } as const;
type Name = keyof typeof PORTS;

interface JobRow {
  status: string;
  locked_by: string | null;
  progress: number | null;
  total: number | null;
  attempts: number;
}

/** An instance with its job runner on, as an operator runs several (the bench's other servers keep theirs off). */
const instance = (ctx: Context, ds: Dataset, databaseUrl: string, name: Name) =>
  startApp(ctx, { ...ds, databaseUrl }, PORTS[name], {
    JOB_RUNNER: "true",
    JOB_LEASE_SECONDS: String(LEASE_SECONDS),
    INSTANCE_ID: `bench-${name}`,
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * P11: a bulk job (a keyword added to the whole 100k project, queued as the bulk page queues it) is caught running
 * mid-way on one of two instances, whose process is then killed with SIGKILL; measured from the kill to the job
 * held by the other instance's runner. Then the job must end done with every image changed exactly once (one new
 * version carrying the keyword per image). On a throwaway copy of the PostgreSQL 100k database.
 */
export const p11: Metric = {
  id: "P11",
  title: "From kill -9 of a job's instance to the job running on the other instance (PostgreSQL 100k)",
  goal: `≤ lease + 5 s (lease ${LEASE_SECONDS} s here), nothing done twice`,
  needs: ["build", "pg-100k"],
  async run(ctx) {
    const ds = await ctx.dataset("pg-100k");
    const copy = await copyPgDataset(ds, "p11");
    const client = new pg.Client({ connectionString: copy.url });
    const servers: Partial<Record<Name, Server>> = {};
    try {
      await client.connect();
      servers.a = await instance(ctx, ds, copy.url, "a");
      servers.b = await instance(ctx, ds, copy.url, "b");
      const job = async (id: number) =>
        (await client.query<JobRow>("select status, locked_by, progress, total, attempts from jobs where id = $1", [id])).rows[0]!;
      const holder = (row: JobRow): Name | null => {
        if (row.status !== "running" || !row.locked_by) return null;
        const pid = Number(row.locked_by.split(":")[1]);
        return (Object.keys(PORTS) as Name[]).find((n) => servers[n]?.proc.child.pid === pid) ?? null;
      };
      const waits: number[] = [];
      const twice: number[] = [];
      const attempts: number[] = [];
      let count = 0;
      for (let round = 0; round < ctx.rounds(3); round++) {
        const keyword = `p11-round-${round + 1}`;
        const queued = await runDatasetWorker<{ jobId: number; count: number }>(ctx, { ...ds, databaseUrl: copy.url }, "queue-bulk.ts", {
          projectId: ds.projectId,
          email: ds.email,
          keyword,
        });
        count = queued.count;
        // Caught mid-way: running, some of its work done and some left.
        let victim: Name | null = null;
        for (const until = Date.now() + 120_000; !victim && Date.now() < until; await sleep(10)) {
          const row = await job(queued.jobId);
          if (row.status === "done") throw new Error(`Round ${round + 1}: the job ended before it could be caught mid-way`);
          if ((row.progress ?? 0) > 0 && (row.progress ?? 0) < (row.total ?? 0)) victim = holder(row);
        }
        if (!victim) throw new Error(`Round ${round + 1}: the job was never seen running mid-way`);
        const survivor: Name = victim === "a" ? "b" : "a";
        const killed = servers[victim]!;
        const exited = new Promise((r) => killed.proc.child.once("exit", r));
        killed.proc.child.kill("SIGKILL");
        const at = performance.now();
        let waited: number | null = null;
        for (const until = Date.now() + (LEASE_SECONDS + 60) * 1000; waited === null && Date.now() < until; await sleep(20)) {
          const row = await job(queued.jobId);
          if (holder(row) === survivor || row.status === "done") waited = performance.now() - at;
        }
        if (waited === null) throw new Error(`Round ${round + 1}: the job was not taken over within the lease + 60 s`);
        waits.push(waited);
        await exited;
        servers[victim] = await instance(ctx, ds, copy.url, victim);
        for (const until = Date.now() + 600_000; (await job(queued.jobId)).status !== "done"; await sleep(200)) {
          const row = await job(queued.jobId);
          if (row.status === "failed" || Date.now() > until) throw new Error(`Round ${round + 1}: the job ended ${row.status}`);
        }
        const changed = await client.query<{ versions: string; images: string }>(
          `select count(*) as versions, count(distinct v.image_id) as images from image_versions v join images i on i.id = v.image_id
            where i.project_id = $1 and v.keywords like $2`,
          [ds.projectId, `%"${keyword}"%`],
        );
        const { versions, images } = changed.rows[0]!;
        if (Number(images) !== count) throw new Error(`Round ${round + 1}: ${images} of ${count} images carry the keyword`);
        twice.push(Number(versions) - Number(images));
        attempts.push((await job(queued.jobId)).attempts);
        ctx.log(
          `    round ${round + 1}: killed ${victim} mid-way; ${survivor} held the job ${(waited / 1000).toFixed(2)} s later; ` +
            `${count} images, ${Number(versions) - Number(images)} changed twice, ${attempts.at(-1)} attempts`,
        );
      }
      const worst = Math.max(...waits) / 1000;
      const doneTwice = twice.reduce((a, b) => a + b, 0);
      return {
        figure: worst,
        unit: "s",
        absolute: { name: "median wait", value: median(waits) / 1000, unit: "s" },
        checks: [
          { name: "longest wait", value: worst, unit: "s", goal: `≤ ${LEASE_SECONDS + 5}`, pass: worst <= LEASE_SECONDS + 5 },
          { name: "images changed twice", value: doneTwice, unit: "", goal: "0", pass: doneTwice === 0 },
        ],
        subject: { "median wait s": median(waits) / 1000, "longest wait s": worst, "images per job": count },
        baseline: { "lease s": LEASE_SECONDS },
        rounds: waits.length,
        perRound: { waitMs: waits, changedTwice: twice, attempts },
        notes: [
          `Two instances with JOB_RUNNER on and JOB_LEASE_SECONDS=${LEASE_SECONDS} (the product's default is 60: the wait grows with it), ` +
            "on a copy of the PostgreSQL 100k database. The job: a keyword added to all 100,000 images (Select all), " +
            "queued by runBulk as the bulk page does; caught mid-way, its instance killed with SIGKILL, restarted after the takeover.",
          "The wait is what was left of the dead runner's lease (renewed every fifth of it) plus up to one idle poll (1 s) of the survivor: " +
            "a dead process sends no NOTIFY, so the lease is the bound.",
        ],
      };
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.stop()));
      await client.end().catch(() => {});
      await copy.drop();
    }
  },
};
