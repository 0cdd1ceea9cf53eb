import SQLite from "better-sqlite3";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { appEnv } from "../lib/datasets";
import { interleave } from "../lib/interleave";
import { load, type LoadSummary } from "../lib/load";
import { run } from "../lib/proc";
import { startApp } from "../lib/server";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";

const CONNECTIONS = 50;
const SECONDS = 5;
/** Images whose text the server may read again: more than a round's readings. */
const READABLE = 400;

/**
 * P14b: the project page under P2's load (50 connections, signed in, the 100k project) while the server's own job
 * runner reads pictures (OCR, in its worker thread on the same core), against the same load with no reading queued.
 * One server on a copy of the dataset; before each busy round READABLE readings are queued (and the round starts once
 * one runs), after it the rest are dropped and the running one finishes. Ratio of p99s per round, median of rounds.
 */
export const p14b: Metric = {
  id: "P14b",
  title: "Project page p99 while OCR runs in the background ÷ without, 50 connections, 100k project",
  goal: "≤ 1.5×",
  needs: ["build", "sqlite-100k"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100k");
    const work = path.join(ctx.cache, "tmp", "p14b");
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    const file = path.join(work, "koala.sqlite");
    const source = new SQLite(path.join(ds.dataDir, "koala.sqlite"), { readonly: true });
    await source.backup(file);
    source.close();
    const copy = { dataDir: ds.dataDir, databaseUrl: `sqlite:${file}` };
    const env = { ...process.env, ...appEnv(copy), BENCH_PROJECT_ID: String(ds.projectId), OCR: "on" };
    const busy = async (mode: string, n = 0) =>
      JSON.parse(
        await run(null, path.join(ctx.root, "node_modules/.bin/tsx"), ["bench/workers/ocr-busy.ts", mode, String(n)], {
          cwd: ctx.root,
          env,
        }),
      ) as {
        readings: number;
        running: number;
      };
    await busy("prepare", READABLE);
    const app = await startApp(ctx, ds, 3915, { DATABASE_URL: copy.databaseUrl, JOB_RUNNER: "true", OCR: "on" });
    try {
      const cookie = await ctx.signIn(app.url, ds);
      const page = () =>
        load(ctx, `${app.url}/client/${ds.projectId}`, { connections: CONNECTIONS, seconds: SECONDS, headers: { Cookie: cookie } });
      await page();
      const readings: number[] = [];
      const busyRound = async (): Promise<LoadSummary> => {
        const before = (await busy("queue", READABLE)).readings;
        for (let i = 0; i < 50 && (await busy("count")).running === 0; i++) await new Promise((r) => setTimeout(r, 200));
        const result = await page();
        let state = await busy("stop");
        readings.push(state.readings - before);
        while (state.running > 0) {
          await new Promise((r) => setTimeout(r, 200));
          state = await busy("count");
        }
        return result;
      };
      const rounds = await interleave(ctx.rounds(5), busyRound, page, (r, a, b) =>
        ctx.log(
          `    round ${r + 1}: OCR busy p99 ${a.p99} ms, ${a.rps.toFixed(0)} req/s (${readings.at(-1)} readings); idle p99 ${b.p99} ms, ${b.rps.toFixed(0)} req/s`,
        ),
      );
      const ratio = rounds.a.map((a, i) => a.p99 / rounds.b[i]!.p99);
      const figure = median(ratio);
      return {
        figure,
        unit: "×",
        absolute: { name: "p99 with OCR busy", value: median(rounds.a.map((a) => a.p99)), unit: "ms" },
        checks: [{ name: "p99 ratio", value: figure, unit: "×", goal: "≤ 1.5", pass: figure <= 1.5, rounds: "ratio" }],
        subject: { "p99 ms": median(rounds.a.map((a) => a.p99)), "req/s": median(rounds.a.map((a) => a.rps)), readings: median(readings) },
        baseline: { "p99 ms": median(rounds.b.map((b) => b.p99)), "req/s": median(rounds.b.map((b) => b.rps)) },
        rounds: ratio.length,
        perRound: { ratio, readings },
        notes: [
          `The server's runner reads pictures (the dataset's 8 demo pictures, each with its painted caption) one at a time in its OCR worker thread, pinned with the server to one core; ${CONNECTIONS} connections, ${SECONDS} s per round.`,
          "The reading thread runs at nice 19 (services/ocr-pool.server.ts), so requests go first on a shared core; each reading also writes a version, which moves the project's version on and makes the next page a first view.",
          "Upload latency under OCR is not measured here: uploads share the same core and the same rule.",
        ],
      };
    } finally {
      await app.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
};
