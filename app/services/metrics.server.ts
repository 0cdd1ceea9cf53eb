import { conn } from "~/db/connection.server";
import { JOB_TYPES } from "~/lib/job-types";
import { log } from "~/lib/log.server";
import { metrics, promClient as client } from "~/lib/metrics.server";
import { jobQueueStats } from "~/models/jobs.server";

/**
 * What /metrics answers (server/index.ts): the counters of lib/metrics.server.ts, and the gauges of a state read at
 * scrape time: the job queue (one grouped query), the PostgreSQL pool (SQLite has none: not reported), admission
 * control's places and queue (the HTTP front hands its stats over with `watchAdmission`).
 */

/** What admission control (server/admission.ts) reports: requests running, waiting, and refused so far by reason. */
export interface AdmissionStats {
  running: number;
  waiting: number;
  refused: Record<string, number>;
}

function create() {
  const { registry } = metrics();
  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new client.Gauge({ name, help, labelNames, registers: [registry] });
  const state = {
    admission: null as (() => AdmissionStats) | null,
    inFlight: null as (() => number) | null,
    pool: null as { inUse: client.Gauge; idle: client.Gauge; waiting: client.Gauge } | null,
  };
  const jobsWaiting = gauge("koala_job_queue_depth", "Jobs due and waiting for a worker, by type", ["type"]);
  const jobsOldest = gauge(
    "koala_job_queue_oldest_age_seconds",
    "How long the longest-waiting due job has waited since it became due, by type (0: none waiting)",
    ["type"],
  );
  const jobsRunning = gauge("koala_jobs_running", "Jobs running (on any instance), by type", ["type"]);
  const inFlight = gauge(
    "koala_http_requests_in_flight",
    "Requests received and not yet answered to their end (uploads and downloads included; a scrape on PORT counts itself)",
  );
  const admissionRunning = gauge("koala_admission_running", "Requests running under admission control");
  const admissionWaiting = gauge("koala_admission_queue_depth", "Requests waiting in admission control's queue");
  const admissionRefused = new client.Counter({
    name: "koala_admission_refused_total",
    help: "Requests answered 503 by admission control, by reason: queue_full, waited (too long in the queue), timeout",
    labelNames: ["reason"],
    registers: [registry],
  });

  async function collect() {
    const now = Date.now();
    jobsWaiting.reset();
    jobsOldest.reset();
    jobsRunning.reset();
    for (const type of JOB_TYPES) {
      jobsWaiting.set({ type }, 0);
      jobsOldest.set({ type }, 0);
      jobsRunning.set({ type }, 0);
    }
    try {
      for (const row of await jobQueueStats(now)) {
        if (row.status === "running") jobsRunning.set({ type: row.type }, row.count);
        else {
          jobsWaiting.set({ type: row.type }, row.count);
          jobsOldest.set({ type: row.type }, Math.max(0, (now - row.oldestDue) / 1000));
        }
      }
    } catch (error) {
      log.warn("metrics: job queue not read", { error: error instanceof Error ? error.message : String(error) });
    }

    const poolStats = conn().poolStats;
    if (poolStats) {
      state.pool ??= {
        inUse: gauge("koala_db_pool_in_use", "PostgreSQL pool connections running a query"),
        idle: gauge("koala_db_pool_idle", "PostgreSQL pool connections open and idle"),
        waiting: gauge("koala_db_pool_waiting", "Queries waiting for a PostgreSQL pool connection"),
      };
      const { total, idle, waiting } = poolStats();
      state.pool.inUse.set(total - idle);
      state.pool.idle.set(idle);
      state.pool.waiting.set(waiting);
    }

    if (state.inFlight) inFlight.set(state.inFlight());
    if (state.admission) {
      const { running, waiting, refused } = state.admission();
      admissionRunning.set(running);
      admissionWaiting.set(waiting);
      admissionRefused.reset();
      for (const [reason, count] of Object.entries(refused)) admissionRefused.inc({ reason }, count);
    }
  }
  return { state, collect };
}

const holder = globalThis as { __koalaScrape?: ReturnType<typeof create> };
const scrape = () => (holder.__koalaScrape ??= create());

/** The HTTP front's admission control, read at each scrape. */
export function watchAdmission(stats: () => AdmissionStats) {
  scrape().state.admission = stats;
}

/** The HTTP front's count of requests in flight (server/drain.ts), read at each scrape. */
export function watchInFlight(count: () => number) {
  scrape().state.inFlight = count;
}

/** One answered request: its route id (or fixed label), status and seconds from arrival to the end of its answer. */
export function observeRequest(route: string, status: number, seconds: number) {
  const m = metrics();
  const labels = { route, status: String(status) };
  m.httpRequests.inc(labels);
  m.httpDuration.observe(labels, seconds);
}

/** The metrics in Prometheus's text format, with the scrape-time gauges read now. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  await scrape().collect();
  const { registry } = metrics();
  return { contentType: registry.contentType, body: await registry.metrics() };
}
