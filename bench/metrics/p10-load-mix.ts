import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { interleave } from "../lib/interleave";
import { load, loadBaseline, loadBoundNote, loadRounds } from "../lib/load";
import { startApp, startStaticPaths } from "../lib/server";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";

const CONNECTIONS = 200;
const SECONDS = 20;
const ROUNDS = 3;

/**
 * P10: what a busy morning looks like. 200 signed-in connections, each asking in turn for the dashboard, the
 * 100k project's page, a page of /api/grid and a thumbnail, for 3 rounds of 20 s (60 s against the app), against
 * node:http answering the same four answers' bytes from memory. Admission control (server/admission.mjs) runs as
 * in production: anything it refuses (503) counts as an error here, as do socket errors and client timeouts (10 s).
 */
export const p10: Metric = {
  id: "P10",
  title: "Mixed signed-in load (dashboard, project page, /api/grid, thumbnail) at 200 connections, 100k project",
  goal: "0 errors (no 503, no timeout) over 60 s, p99 ≤ 1 s; req/s beside node:http serving the same bytes",
  needs: ["build", "sqlite-100k"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100k");
    const app = await startApp(ctx, ds, 3950);
    try {
      const cookie = await ctx.signIn(app.url, ds);
      const paths = [
        "/dashboard",
        `/client/${ds.projectId}`,
        `/api/grid?project=${ds.projectId}&limit=100`,
        `/media/${ds.firstImage.id}/${ds.firstImage.thumbKey.replaceAll("/", "~")}`,
      ];
      const manifest: Record<string, { file: string; type: string }> = {};
      const dir = path.join(ctx.cache, "tmp", "p10");
      mkdirSync(dir, { recursive: true });
      for (const [i, p] of paths.entries()) {
        const res = await fetch(app.url + p, { headers: { Cookie: cookie }, redirect: "manual" });
        if (res.status !== 200) throw new Error(`GET ${p} answered ${res.status}`);
        const file = path.join(dir, `answer-${i}`);
        writeFileSync(file, Buffer.from(await res.arrayBuffer()));
        manifest[p] = { file, type: res.headers.get("content-type") ?? "application/octet-stream" };
      }
      const manifestFile = path.join(dir, "manifest.json");
      writeFileSync(manifestFile, JSON.stringify(manifest));
      const base = await startStaticPaths(ctx, manifestFile, 3951);
      try {
        const appRun = () =>
          load(ctx, app.url, { connections: CONNECTIONS, seconds: SECONDS, headers: { Cookie: cookie }, paths, countNon2xx: true });
        const baseRun = () => load(ctx, base.url, { connections: CONNECTIONS, seconds: SECONDS, paths, countNon2xx: true });
        await load(ctx, app.url, { connections: CONNECTIONS, seconds: 3, headers: { Cookie: cookie }, paths, countNon2xx: true });
        await load(ctx, base.url, { connections: CONNECTIONS, seconds: 3, paths });
        const rounds = await interleave(ctx.rounds(ROUNDS), appRun, baseRun, (r, a, b) =>
          ctx.log(
            `    round ${r + 1}: app ${a.rps.toFixed(0)} req/s (p99 ${a.p99} ms, ${a.non2xx} non-2xx, ${a.errors + a.timeouts} errors), node:http ${b.rps.toFixed(0)} req/s`,
          ),
        );
        const ratios = rounds.a.map((a, i) => a.rps / rounds.b[i]!.rps);
        const errors = rounds.a.reduce((n, a) => n + a.non2xx + a.errors + a.timeouts, 0);
        const p99 = median(rounds.a.map((a) => a.p99));
        const worstP99 = Math.max(...rounds.a.map((a) => a.p99));
        const appRps = median(rounds.a.map((a) => a.rps));
        return {
          figure: p99,
          unit: "ms",
          absolute: { name: "app req/s", value: appRps, unit: "req/s" },
          checks: [
            { name: "p99", value: p99, unit: "ms", goal: "≤ 1000", pass: p99 <= 1000, rounds: "appP99" },
            { name: "errors", value: errors, unit: "", goal: "0", pass: errors === 0 },
          ],
          subject: {
            "req/s": appRps,
            "ratio to node:http": median(ratios),
            "p50 ms": median(rounds.a.map((a) => a.p50)),
            "p99 ms": p99,
            "worst round p99 ms": worstP99,
            "max ms": Math.max(...rounds.a.map((a) => a.max)),
          },
          baseline: loadBaseline(rounds.b),
          rounds: ratios.length,
          perRound: { ...loadRounds(ratios, rounds), appErrors: rounds.a.map((a) => a.non2xx + a.errors + a.timeouts) },
          notes: [
            `${CONNECTIONS} connections, each cycling through ${paths.length} paths; ${ROUNDS} rounds of ${SECONDS} s per side.`,
            loadBoundNote("node:http", median(rounds.b.map((b) => b.loadCpu))),
          ],
        };
      } finally {
        await base.stop();
      }
    } finally {
      await app.stop();
    }
  },
};
