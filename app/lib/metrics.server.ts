import client from "prom-client";
import { JOB_TYPES } from "./job-types";

/**
 * The process's Prometheus metrics (issue 26), served at /metrics (server/index.ts, docs/operations.md). Counters and
 * histograms are counted where things happen: requests by the HTTP front, refusals by admission control, failed jobs
 * by the runner, render-memo look-ups by the memo. Gauges that describe a state (the job queue, the database pool,
 * admission's queue) are read at scrape time by services/metrics.server.ts. Every label has a bounded set of values:
 * a route id, never a URL.
 */
function create() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const m = {
    registry,
    httpRequests: new client.Counter({
      name: "koala_http_requests_total",
      help: "HTTP requests answered, by route id (or media, shared-page, static, other) and status",
      labelNames: ["route", "status"] as const,
      registers: [registry],
    }),
    httpDuration: new client.Histogram({
      name: "koala_http_request_duration_seconds",
      help: "Time from a request's arrival to the end of its answer, by route id and status",
      labelNames: ["route", "status"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    jobFailures: new client.Counter({
      name: "koala_job_failures_total",
      help: "Jobs failed for good (their last attempt failed), by type",
      labelNames: ["type"] as const,
      registers: [registry],
    }),
    jobRetries: new client.Counter({
      name: "koala_job_retries_total",
      help: "Failed job attempts queued again after their backoff, by type",
      labelNames: ["type"] as const,
      registers: [registry],
    }),
    listenHeard: new client.Gauge({
      name: "koala_listen_heard",
      help: "1 while a LISTEN session (by channel) has heard its own probe since it was (re)established; 0 while it is down or hears nothing (a transaction pooler between it and PostgreSQL)",
      labelNames: ["channel"] as const,
      registers: [registry],
    }),
    renderMemo: new client.Counter({
      name: "koala_render_memo_lookups_total",
      help: "Memoized-render look-ups (docs/decisions/0018), by result: hit or miss",
      labelNames: ["result"] as const,
      registers: [registry],
    }),
  };
  // Series that exist from the start, at 0: a rate over them is defined before the first event.
  for (const type of JOB_TYPES) {
    m.jobFailures.inc({ type }, 0);
    m.jobRetries.inc({ type }, 0);
  }
  for (const result of ["hit", "miss"]) m.renderMemo.inc({ result }, 0);
  return m;
}

export type Metrics = ReturnType<typeof create>;

// Kept on globalThis, like the database connection: the dev server's module reloads keep the one set (registering a
// metric twice in a registry throws).
const holder = globalThis as { __koalaMetrics?: Metrics };

/** The process-wide metrics. */
export function metrics(): Metrics {
  return (holder.__koalaMetrics ??= create());
}

export { client as promClient };
