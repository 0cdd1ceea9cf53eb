import path from "node:path";
import { run } from "./proc";
import type { Context } from "./types";

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
