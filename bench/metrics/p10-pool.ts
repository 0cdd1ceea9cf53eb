import { load, type LoadSummary } from "../lib/load";
import { startApp, type Server } from "../lib/server";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";

const CONNECTIONS = 100;
const SECONDS = 15;
const ROUNDS = 3;
/** The pool sizes tried, the default (PG_POOL_MAX's, config.server.ts) among them. */
const SIZES = [2, 5, 10, 20];
const DEFAULT = 10;
const PORT = 3970;

const failures = (s: LoadSummary) => s.non2xx + s.errors + s.timeouts;

/**
 * P10-pool: PG_POOL_MAX measured against this machine's 2 cores. One instance on the PostgreSQL 100k project under
 * a mix that asks the database on every request (the grid's JSON: first page, a common word, a prefix, a rare word,
 * a common word with a page after it; the dashboard), 100 connections, once per pool size; the sizes take turns
 * within a round, each round in another order. The figure: the default's req/s over the best size's.
 */
export const p10pool: Metric = {
  id: "P10-pool",
  title: `PG_POOL_MAX ${SIZES.join(" / ")} under a database-bound mix at ${CONNECTIONS} connections (PostgreSQL 100k)`,
  goal: `the default (${DEFAULT}) ≥ 0.9× the best size's req/s; 0 errors; p99 ≤ 1 s`,
  needs: ["build", "pg-100k"],
  async run(ctx) {
    const ds = await ctx.dataset("pg-100k");
    const grid = `/api/grid?project=${ds.projectId}&limit=100`;
    const paths = [grid, `${grid}&q=london`, `${grid}&q=lon`, `${grid}&q=zanzibar`, `${grid}&q=london+market`, "/dashboard"];
    const runs = new Map<number, LoadSummary[]>(SIZES.map((s) => [s, []]));
    for (let r = 0; r < ctx.rounds(ROUNDS); r++) {
      // Each round in another order, so a drift in the machine's speed does not fall on one size.
      const order = SIZES.map((_, i) => SIZES[(i + r) % SIZES.length]!);
      for (const size of order) {
        let server: Server | null = null;
        try {
          server = await startApp(ctx, ds, PORT, { PG_POOL_MAX: String(size) });
          const cookie = await ctx.signIn(server.url, ds);
          const options = { connections: CONNECTIONS, headers: { Cookie: cookie }, paths, countNon2xx: true };
          await load(ctx, server.url, { ...options, seconds: 4 }); // JIT, the pool's connections, the counts kept
          const summary = await load(ctx, server.url, { ...options, seconds: SECONDS });
          runs.get(size)!.push(summary);
          ctx.log(`    round ${r + 1}, pool ${size}: ${summary.rps.toFixed(0)} req/s, p99 ${summary.p99} ms, ${failures(summary)} failed`);
        } finally {
          await server?.stop();
        }
      }
    }
    const rps = new Map(SIZES.map((s) => [s, median(runs.get(s)!.map((x) => x.rps))]));
    const p99 = new Map(SIZES.map((s) => [s, median(runs.get(s)!.map((x) => x.p99))]));
    const best = SIZES.reduce((a, b) => (rps.get(b)! > rps.get(a)! ? b : a));
    const ratio = rps.get(DEFAULT)! / rps.get(best)!;
    const errors = [...runs.values()].flat().reduce((n, x) => n + failures(x), 0);
    const defaultP99 = p99.get(DEFAULT)!;
    return {
      figure: ratio,
      unit: "×",
      absolute: { name: `req/s at pool ${DEFAULT}`, value: rps.get(DEFAULT)!, unit: "req/s" },
      checks: [
        { name: "default ÷ best", value: ratio, unit: "×", goal: "≥ 0.9", pass: ratio >= 0.9 },
        { name: "errors", value: errors, unit: "", goal: "0", pass: errors === 0 },
        { name: `p99 at pool ${DEFAULT}`, value: defaultP99, unit: "ms", goal: "≤ 1000", pass: defaultP99 <= 1000 },
      ],
      subject: Object.fromEntries(
        SIZES.flatMap((s) => [[`pool ${s} req/s`, rps.get(s)!] as const, [`pool ${s} p99 ms`, p99.get(s)!] as const]),
      ),
      baseline: { "best size": best, "best req/s": rps.get(best)! },
      rounds: runs.get(DEFAULT)!.length,
      perRound: Object.fromEntries(SIZES.map((s) => [`pool${s}Rps`, runs.get(s)!.map((x) => x.rps)])),
      notes: [
        `${CONNECTIONS} connections, each cycling through ${paths.join(", ")}; ${SECONDS} s per size per round after 4 s of warming, ` +
          `a fresh instance for each, pinned to the server core; PostgreSQL (the machine's, unpinned) shares both cores with it and the load generator.`,
      ],
    };
  },
};
