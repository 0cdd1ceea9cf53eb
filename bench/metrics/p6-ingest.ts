import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { interleave } from "../lib/interleave";
import { assertPortFree, run, start, waitForHttp } from "../lib/proc";
import { profileArgs } from "../lib/server";
import { median } from "../lib/stats";
import type { Context, Metric, MetricResult } from "../lib/types";

const FILES = 12;
/** The browser uploader's concurrency (app/lib/uploads.ts), used by both sides. */
export const CONCURRENCY = 3;
const PORT = 3950;
const SESSION_SECRET = "bench-ingest-secret-not-for-production-0123456789";

export interface Side {
  imagesPerSecond: number;
  peakRssMiB: number;
}

/** Peak resident memory of a live process (VmHWM), in MiB. */
function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/**
 * One round of the app: a fresh server and library, the files uploaded through sign → PUT → register.
 * `extraEnv` for the server and its setup (P6-s3: the bucket).
 */
export async function appRound(ctx: Context, files: string[], extraEnv: Record<string, string> = {}): Promise<Side> {
  const dataDir = mkdtempSync(path.join(ctx.cache, "ingest-run-"));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    SESSION_SECRET,
    KOALA_ENV: "development",
    DEMO_SEED: "off",
    LOG_LEVEL: "warn",
    ...extraEnv,
  };
  try {
    const { projectId, cookie } = JSON.parse(
      await run(null, path.join(ctx.root, "node_modules/.bin/tsx"), ["bench/workers/ingest-setup.ts"], { cwd: ctx.root, env }),
    ) as {
      projectId: number;
      cookie: string;
    };
    await assertPortFree(PORT);
    const url = `http://127.0.0.1:${PORT}`;
    const server = start(ctx.cores.server, process.execPath, [...profileArgs(ctx), "build/server.js"], {
      cwd: ctx.appDir,
      env: { ...env, NODE_ENV: "production", PORT: String(PORT), HOST: "127.0.0.1", APP_URL: url, JOB_RUNNER: "false" },
    });
    try {
      await waitForHttp(`${url}/healthz`, server);
      const out = JSON.parse(
        await run(ctx.cores.load, process.execPath, [
          path.join(ctx.root, "bench/workers/ingest-client.mjs"),
          url,
          cookie,
          String(projectId),
          String(CONCURRENCY),
          ...files,
        ]),
      ) as { images: number; seconds: number };
      return { imagesPerSecond: out.images / out.seconds, peakRssMiB: peakRssMiB(server.pid) };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One round of the baseline: the bare sharp script on the server core (`extraEnv`: see the script). */
export async function sharpRound(ctx: Context, files: string[], extraEnv: Record<string, string> = {}): Promise<Side> {
  const outDir = mkdtempSync(path.join(ctx.cache, "ingest-sharp-"));
  try {
    const out = JSON.parse(
      await run(
        ctx.cores.server,
        process.execPath,
        [path.join(ctx.root, "bench/workers/ingest-sharp.mjs"), outDir, String(CONCURRENCY), ...files],
        { env: { ...process.env, ...extraEnv } },
      ),
    ) as {
      images: number;
      seconds: number;
      maxRssKiB: number;
    };
    return { imagesPerSecond: out.images / out.seconds, peakRssMiB: out.maxRssKiB / 1024 };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** The cached 12-megapixel JPEGs both sides ingest, and their average size in MB. */
export async function ingestFiles(ctx: Context) {
  const dir = path.join(ctx.cache, "ingest-files");
  ctx.log(`    preparing ${FILES} 12-megapixel JPEGs in ${path.relative(ctx.root, dir)} (cached)`);
  await run(null, process.execPath, [path.join(ctx.root, "bench/workers/ingest-files.mjs"), dir, String(FILES)]);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".jpg"))
    .sort()
    .slice(0, FILES)
    .map((f) => path.join(dir, f));
  const megabytes = files.reduce((sum, f) => sum + readFileSync(f).length, 0) / files.length / 1024 / 1024;
  return { files, megabytes };
}

/** P6's and P6-s3's result: the app's rate and peak RSS against the baseline's, per round, and their medians. */
export function ingestResult(rounds: { a: Side[]; b: Side[] }, notes: string[]): MetricResult {
  const rate = rounds.a.map((a, i) => a.imagesPerSecond / rounds.b[i]!.imagesPerSecond);
  const memory = rounds.a.map((a, i) => a.peakRssMiB / rounds.b[i]!.peakRssMiB);
  const rateRatio = median(rate);
  const memoryRatio = median(memory);
  return {
    figure: rateRatio,
    unit: "×",
    absolute: { name: "app images/s", value: median(rounds.a.map((a) => a.imagesPerSecond)), unit: "img/s" },
    checks: [
      { name: "rate ratio", value: rateRatio, unit: "×", goal: "≥ 0.9", pass: rateRatio >= 0.9, rounds: "rate" },
      { name: "memory ratio", value: memoryRatio, unit: "×", goal: "≤ 1.5", pass: memoryRatio <= 1.5, rounds: "memory" },
    ],
    subject: { "images/s": median(rounds.a.map((a) => a.imagesPerSecond)), "peak RSS MiB": median(rounds.a.map((a) => a.peakRssMiB)) },
    baseline: { "images/s": median(rounds.b.map((b) => b.imagesPerSecond)), "peak RSS MiB": median(rounds.b.map((b) => b.peakRssMiB)) },
    rounds: rate.length,
    perRound: { rate, memory },
    notes,
  };
}

/**
 * P6: ingest of 12-megapixel JPEGs through the running production server (signed URL, PUT, registration with
 * its checks, hashing, content-addressed storage, WebP thumb and preview, the database transaction), against a
 * bare sharp script making the same derivatives from the same files. Both run on the server core, three files
 * at a time; the app's client runs on the load core. Rate: images per second over the whole batch. Memory: the
 * server's peak RSS (a fresh process per round, so it includes Node, Remix and the app) against the script's.
 */
export const p6: Metric = {
  id: "P6",
  title: "Ingest of 12-megapixel JPEGs (register + derivatives)",
  goal: "≥ 0.9× bare sharp's images/s, ≤ 1.5× its peak RSS",
  needs: ["build"],
  async run(ctx) {
    const { files, megabytes } = await ingestFiles(ctx);
    const rounds = await interleave(
      ctx.rounds(3),
      () => appRound(ctx, files),
      () => sharpRound(ctx, files),
      (r, a, b) =>
        ctx.log(
          `    round ${r + 1}: app ${a.imagesPerSecond.toFixed(2)} img/s, ${a.peakRssMiB.toFixed(0)} MiB; sharp ${b.imagesPerSecond.toFixed(2)} img/s, ${b.peakRssMiB.toFixed(0)} MiB`,
        ),
    );
    return ingestResult(rounds, [
      `${files.length} JPEGs of 4000×3000, ${megabytes.toFixed(1)} MB each on average; ${CONCURRENCY} at a time on both sides.`,
    ]);
  },
};
