import { mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { interleave } from "../lib/interleave";
import { run } from "../lib/proc";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";

/** The pool's threads on both sides (OCR_CONCURRENCY's default on this 2-core machine). */
const THREADS = 1;

interface Side {
  imagesPerSecond: number;
  peakRssMiB: number;
  /** What reading added to the process: its peak RSS less its RSS just before the first reading. */
  addedRssMiB: number;
}

/**
 * P14: OCR through the product (every picture of the OCR corpus uploaded, its reading queued, a job runner taking
 * the jobs: preview read from the store, made a grey PGM, read in the pool's worker thread, the text cleaned and saved
 * as a version) against bare tesseract.js reading the same PGMs with the same workers and thread count. A fresh
 * process per round, unpinned as a server runs (and, beside it, both held to the server core); images per second
 * over the whole corpus, and what reading adds to each process's RSS.
 */
export const p14: Metric = {
  id: "P14",
  title: "OCR images/s through the job pool, OCR corpus (46 pictures)",
  goal: "≥ 0.9× bare tesseract.js's images/s; RSS added by reading ≤ 1.3× bare's",
  needs: ["build"],
  async run(ctx) {
    const dataDir = mkdtempSync(path.join(ctx.cache, "ocr-run-"));
    const env = {
      ...process.env,
      DATA_DIR: dataDir,
      KOALA_ENV: "development",
      DEMO_SEED: "off",
      LOG_LEVEL: "warn",
      OCR: "on",
      OCR_CONCURRENCY: String(THREADS),
      // As the product's launchers set it (decision 0029); the bare side too, so that memory compares like with like.
      MALLOC_ARENA_MAX: "2",
    };
    const tsx = path.join(ctx.root, "node_modules/.bin/tsx");
    try {
      ctx.log("    uploading the OCR corpus into a fresh library");
      await run(null, tsx, ["bench/workers/ocr-app.ts", "setup", dataDir, path.join(ctx.root, "tests/fixtures/ocr")], {
        cwd: ctx.root,
        env,
      });
      const side = (out: string): Side => {
        const r = JSON.parse(out) as { images: number; seconds: number; maxRssKiB: number; rssBeforeKiB: number };
        return {
          imagesPerSecond: r.images / r.seconds,
          peakRssMiB: r.maxRssKiB / 1024,
          addedRssMiB: (r.maxRssKiB - r.rssBeforeKiB) / 1024,
        };
      };
      const appSide = async (cores: string | null) =>
        side(await run(cores, tsx, ["bench/workers/ocr-app.ts", "run", dataDir], { cwd: ctx.root, env }));
      const bareSide = async (cores: string | null) =>
        side(
          await run(
            cores,
            process.execPath,
            [path.join(ctx.root, "bench/workers/ocr-bare.mjs"), path.join(dataDir, "bare"), String(THREADS)],
            {
              env: { ...process.env, MALLOC_ARENA_MAX: "2" },
            },
          ),
        );
      const logRound = (label: string) => (r: number, a: Side, b: Side) =>
        ctx.log(
          `    ${label} round ${r + 1}: app ${a.imagesPerSecond.toFixed(2)} img/s, +${a.addedRssMiB.toFixed(0)} of ${a.peakRssMiB.toFixed(0)} MiB; bare ${b.imagesPerSecond.toFixed(2)} img/s, +${b.addedRssMiB.toFixed(0)} of ${b.peakRssMiB.toFixed(0)} MiB`,
        );
      // As a server runs: the machine's cores, unpinned (the goal's figure).
      const rounds = await interleave(
        ctx.rounds(5),
        () => appSide(null),
        () => bareSide(null),
        logRound("both cores"),
      );
      // And both sides held to the server core: there the app takes no job beyond the pool's threads (no core is
      // left over for decoding the next picture), and its decode takes time from the reading. Not taken unpinned
      // (BENCH_PIN=off, or no taskset).
      const pinned = ctx.cores.server
        ? await interleave(
            ctx.rounds(3),
            () => appSide(ctx.cores.server),
            () => bareSide(ctx.cores.server),
            logRound("one core"),
          )
        : { a: [], b: [] };
      const oneCore = pinned.a.map((a, i) => a.imagesPerSecond / pinned.b[i]!.imagesPerSecond);
      const oneCoreRate = oneCore.length ? median(oneCore) : "not measured (unpinned)";
      const rate = rounds.a.map((a, i) => a.imagesPerSecond / rounds.b[i]!.imagesPerSecond);
      const memory = rounds.a.map((a, i) => a.addedRssMiB / rounds.b[i]!.addedRssMiB);
      const rateRatio = median(rate);
      const memoryRatio = median(memory);
      return {
        figure: rateRatio,
        unit: "×",
        absolute: { name: "app images/s", value: median(rounds.a.map((a) => a.imagesPerSecond)), unit: "img/s" },
        checks: [
          { name: "rate ratio", value: rateRatio, unit: "×", goal: "≥ 0.9", pass: rateRatio >= 0.9, rounds: "rate" },
          { name: "memory ratio", value: memoryRatio, unit: "×", goal: "≤ 1.3", pass: memoryRatio <= 1.3, rounds: "memory" },
        ],
        subject: {
          "images/s": median(rounds.a.map((a) => a.imagesPerSecond)),
          "RSS added MiB": median(rounds.a.map((a) => a.addedRssMiB)),
          "peak RSS MiB": median(rounds.a.map((a) => a.peakRssMiB)),
          "rate ratio on one core": oneCoreRate,
        },
        baseline: {
          "images/s": median(rounds.b.map((b) => b.imagesPerSecond)),
          "RSS added MiB": median(rounds.b.map((b) => b.addedRssMiB)),
          "peak RSS MiB": median(rounds.b.map((b) => b.peakRssMiB)),
        },
        rounds: rate.length,
        perRound: { rate, memory, "rate on one core": oneCore },
        notes: [
          `${THREADS} worker thread on each side; the app through a job runner as a server has it (OCR's own slots: one more than the pool's threads where a core is left over, so the next picture is decoded while one is read), the bare side one reading at a time; worker start-up timed on both sides.`,
          "The goal's figures are taken as a server runs, on the machine's cores. The rate with both sides held to one core is beside them (rate ratio on one core): there the app takes no job beyond its pool's thread, and each picture's decode takes time from the reading.",
          "Memory is what reading adds to each process (its peak RSS less its RSS just before the first reading: the pool's workers, their model data and the pictures in flight), so that the app's modules and database, loaded before, are not counted against OCR. Both peaks are in the table too.",
        ],
      };
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
