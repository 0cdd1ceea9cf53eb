import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { appEnv } from "../lib/datasets";
import { interleave } from "../lib/interleave";
import { load, loadBaseline, loadRounds, pageThroughput } from "../lib/load";
import { run } from "../lib/proc";
import { startApp, startStatic } from "../lib/server";
import { signIn } from "../lib/signin";
import { median } from "../lib/stats";
import type { Context, Metric } from "../lib/types";
import type { Dataset } from "../lib/datasets";

/** The rate limit out of the way (it is still counted, and written once a second: that cost is part of the figure). */
const UNLIMITED = { API_RATE_LIMIT_PER_MINUTE: "100000000" };

async function apiToken(ctx: Context, ds: Dataset): Promise<string> {
  const out = await run(null, path.join(ctx.root, "node_modules/.bin/tsx"), [path.join(ctx.root, "bench/workers/api-token.ts")], {
    cwd: ctx.root,
    env: { ...process.env, ...appEnv(ds), BENCH_EMAIL: ds.email },
  });
  return (JSON.parse(out.trim().split("\n").pop()!) as { token: string }).token;
}

/**
 * P13: the public API's first page of 100 images of the 100k project (`GET /api/v1/projects/:id/images`, a
 * read-only token) against the grid's own JSON loader for the same page (`GET /api/grid?project=…`, a session),
 * on the same server: one connection each, so the figure is the latency of a request, not the server's throughput.
 * The p99 per round, the ratio per round, the median of the ratios (5 rounds of 5 s, interleaved).
 */
export const p13: Metric = {
  id: "P13",
  title: "API first page of 100 images ÷ the grid loader, p99 at one connection, 100k project",
  goal: "≤ 1.5× the grid loader's p99",
  needs: ["build", "sqlite-100k"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100k");
    const token = await apiToken(ctx, ds);
    const app = await startApp(ctx, ds, 3965, UNLIMITED);
    try {
      const cookie = await signIn(app.url, ds);
      const apiUrl = `${app.url}/api/v1/projects/${ds.projectId}/images?limit=100`;
      const gridUrl = `${app.url}/api/grid?project=${ds.projectId}&limit=100`;
      const check = await fetch(apiUrl, { headers: { Authorization: `Bearer ${token}` } });
      const body = (await check.json()) as { items?: unknown[] };
      if (check.status !== 200 || body.items?.length !== 100) throw new Error(`${apiUrl} answered ${check.status} without 100 images`);
      const apiRun = () => load(ctx, apiUrl, { connections: 1, seconds: 5, headers: { Authorization: `Bearer ${token}` } });
      const gridRun = () => load(ctx, gridUrl, { connections: 1, seconds: 5, headers: { Cookie: cookie } });
      await apiRun();
      await gridRun();
      const rounds = await interleave(ctx.rounds(5), apiRun, gridRun, (r, a, b) =>
        ctx.log(
          `    round ${r + 1}: API p99 ${a.p99} ms (${a.rps.toFixed(0)} req/s), grid loader p99 ${b.p99} ms (${b.rps.toFixed(0)} req/s)`,
        ),
      );
      const ratios = rounds.a.map((a, i) => a.p99 / Math.max(rounds.b[i]!.p99, 0.01));
      const ratio = median(ratios);
      const p50s = rounds.a.map((a, i) => a.p50 / Math.max(rounds.b[i]!.p50, 0.01));
      return {
        figure: ratio,
        unit: "×",
        absolute: { name: "API p99", value: median(rounds.a.map((a) => a.p99)), unit: "ms" },
        checks: [{ name: "p99 ratio", value: ratio, unit: "×", goal: "≤ 1.5", pass: ratio <= 1.5, rounds: "ratio" }],
        subject: {
          "p50 ms": median(rounds.a.map((a) => a.p50)),
          "p99 ms": median(rounds.a.map((a) => a.p99)),
          "req/s": median(rounds.a.map((a) => a.rps)),
        },
        baseline: loadBaseline(rounds.b),
        rounds: ratios.length,
        perRound: { ...loadRounds(ratios, rounds), p50Ratio: p50s },
        notes: [
          `p50 ratio (median of rounds): ${median(p50s).toFixed(2)}×. The API also checks the token (one read) and counts its rate limit (in memory, written in batches); the grid loader also counts the project (cached per version).`,
        ],
      };
    } finally {
      await app.stop();
    }
  },
};

/**
 * P13b: the same API page under 50 connections, req/s against node:http serving the very same JSON bytes from
 * memory (5 rounds of 5 s, interleaved).
 */
export const p13b: Metric = {
  id: "P13b",
  title: "API first page of 100 images, req/s at 50 connections, 100k project",
  goal: "≥ 0.1× node:http serving the same JSON",
  needs: ["build", "sqlite-100k"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100k");
    const token = await apiToken(ctx, ds);
    const app = await startApp(ctx, ds, 3966, UNLIMITED);
    try {
      const apiUrl = `${app.url}/api/v1/projects/${ds.projectId}/images?limit=100`;
      const headers = { Authorization: `Bearer ${token}` };
      const res = await fetch(apiUrl, { headers });
      const bytes = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`${apiUrl} answered ${res.status}`);
      const file = path.join(ctx.cache, "tmp", "p13-page.json");
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, bytes);
      const base = await startStatic(ctx, file, 3967, "application/json");
      try {
        const appRun = () => load(ctx, apiUrl, { connections: 50, seconds: 5, headers });
        const baseRun = () => load(ctx, `${base.url}/`, { connections: 50, seconds: 5 });
        await load(ctx, apiUrl, { connections: 50, seconds: 2, headers });
        await load(ctx, `${base.url}/`, { connections: 50, seconds: 2 });
        const rounds = await interleave(ctx.rounds(5), appRun, baseRun, (r, a, b) =>
          ctx.log(`    round ${r + 1}: API ${a.rps.toFixed(0)} req/s (p99 ${a.p99} ms), node:http ${b.rps.toFixed(0)} req/s`),
        );
        return pageThroughput(rounds, { ratio: 0.1, p99: 1000 }, [
          `${(bytes.length / 1024).toFixed(1)} KiB of JSON (100 images), uncompressed; every request checks the token and counts its rate limit (in memory; the count is written once a second here).`,
        ]);
      } finally {
        await base.stop();
      }
    } finally {
      await app.stop();
    }
  },
};
