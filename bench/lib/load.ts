import path from "node:path";
import { run } from "./proc";
import { median } from "./stats";
import type { Context, MetricResult } from "./types";

export interface LoadSummary {
  rps: number;
  requests: number;
  seconds: number;
  /** Latency in ms. */
  p50: number;
  p99: number;
  max: number;
  bytesPerSecond: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Share of its core the load generator used (0–1). */
  loadCpu: number;
}

/** A load test's baseline side in a result: its median req/s and p99, and how busy the load generator was. */
export const loadBaseline = (runs: LoadSummary[]) => ({
  "req/s": median(runs.map((b) => b.rps)),
  "p99 ms": median(runs.map((b) => b.p99)),
  "load generator CPU": median(runs.map((b) => b.loadCpu)),
});

/** A load test's rounds in a result: the ratio, the app's req/s and p99, and the baseline's req/s, per round. */
export const loadRounds = (ratios: number[], rounds: { a: LoadSummary[]; b: LoadSummary[] }) => ({
  ratio: ratios,
  appRps: rounds.a.map((a) => a.rps),
  appP99: rounds.a.map((a) => a.p99),
  baselineRps: rounds.b.map((b) => b.rps),
});

/** One autocannon run from a separate process pinned to the load core (workers/load.mjs). */
export async function load(
  ctx: Context,
  url: string,
  opts: {
    connections?: number;
    seconds?: number;
    headers?: Record<string, string>;
    /** A mix: each connection requests these paths in turn. */
    paths?: string[];
    /** Every request's URL gets this query parameter with a number of its own (no two requests ask for the same URL). */
    uniqueParam?: string;
    /** Report non-2xx answers (a 503 from admission control) in the summary instead of stopping the metric. */
    countNon2xx?: boolean;
  } = {},
): Promise<LoadSummary> {
  const spec = {
    url,
    connections: opts.connections ?? 50,
    seconds: opts.seconds ?? 5,
    headers: opts.headers ?? {},
    paths: opts.paths,
    uniqueParam: opts.uniqueParam,
  };
  const out = await run(ctx.cores.load, process.execPath, [path.join(ctx.root, "bench/workers/load.mjs"), JSON.stringify(spec)], {
    cwd: ctx.root,
  });
  const summary = JSON.parse(out.trim().split("\n").pop()!) as LoadSummary;
  // A wrong answer (a redirect to /login, a 500) would make the figure meaningless; errors and timeouts are kept and reported.
  if (summary.non2xx && !opts.countNon2xx) throw new Error(`${url}: ${summary.non2xx} non-2xx answers in ${summary.requests} requests`);
  return summary;
}

/**
 * A note on who set the baseline's pace: a load generator near a full core means the baseline server could
 * go faster than measured, so the app's ratio to it is flattered (an upper bound).
 */
export function loadBoundNote(baseline: string, loadCpu: number): string {
  const share = `${Math.round(loadCpu * 100)}%`;
  return loadCpu >= 0.9
    ? `The load generator used ${share} of its core during the ${baseline} runs: ${baseline} was faster than measured, so the ratio is an upper bound.`
    : `The load generator used ${share} of its core during the ${baseline} runs (not saturated).`;
}

/**
 * The result of a page served by the app against the same bytes from `node:http` (P2, P2-first, P3): the median of
 * the per-round req/s ratios, and the app's p99, against their goals; `notes` come first, then who set the
 * baseline's pace and any socket errors.
 */
export function pageThroughput(
  rounds: { a: LoadSummary[]; b: LoadSummary[] },
  goal: { ratio: number; p99: number },
  notes: string[],
): MetricResult {
  const ratios = rounds.a.map((a, i) => a.rps / rounds.b[i]!.rps);
  const ratio = median(ratios);
  const appRps = median(rounds.a.map((a) => a.rps));
  const p99 = median(rounds.a.map((a) => a.p99));
  const failures = rounds.a.reduce((n, a) => n + a.errors + a.timeouts, 0);
  return {
    figure: ratio,
    unit: "×",
    absolute: { name: "app req/s", value: appRps, unit: "req/s" },
    checks: [
      { name: "ratio", value: ratio, unit: "×", goal: `≥ ${goal.ratio}`, pass: ratio >= goal.ratio, rounds: "ratio" },
      { name: "p99", value: p99, unit: "ms", goal: `≤ ${goal.p99}`, pass: p99 <= goal.p99, rounds: "appP99" },
    ],
    subject: { "req/s": appRps, "p50 ms": median(rounds.a.map((a) => a.p50)), "p99 ms": p99 },
    baseline: loadBaseline(rounds.b),
    rounds: ratios.length,
    perRound: loadRounds(ratios, rounds),
    notes: [
      ...notes,
      loadBoundNote("node:http", median(rounds.b.map((b) => b.loadCpu))),
      ...(failures ? [`${failures} socket errors or timeouts against the app.`] : []),
    ],
  };
}
