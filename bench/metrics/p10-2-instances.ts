import { interleave } from "../lib/interleave";
import { load, type LoadSummary } from "../lib/load";
import { startApp, startNginxSite, type Server } from "../lib/server";
import { median } from "../lib/stats";
import type { Context, Metric } from "../lib/types";
import type { Dataset } from "../lib/datasets";

const CONNECTIONS = 200;
const SECONDS = 20;
const ROUNDS = 3;
/** The ports of the two instances and of nginx in front of them (docs/deploy/nginx.conf). */
const PORTS = { a: 3960, b: 3961, nginx: 3962 };

const failures = (s: LoadSummary) => s.non2xx + s.errors + s.timeouts;
const mixOf = (ds: Dataset) => [
  "/dashboard",
  `/client/${ds.projectId}`,
  `/api/grid?project=${ds.projectId}&limit=100`,
  `/media/${ds.firstImage.id}/${ds.firstImage.thumbKey.replaceAll("/", "~")}`,
];
/**
 * An instance as an operator runs one behind the proxy (its own id; the proxy trusted for client addresses), with
 * one V8 helper thread as docs/deploy advises where instances share cores (here both share the server core).
 */
const instance = (ctx: Context, ds: Dataset, port: number, id: string) =>
  startApp(ctx, ds, port, { TRUST_PROXY: "loopback", INSTANCE_ID: id, SHUTDOWN_GRACE_SECONDS: "30", NODE_OPTIONS: "--v8-pool-size=1" });

/** SIGTERM and wait for the drained exit (the bench's own stop would SIGKILL after 5 s). */
async function drainStop(server: Server) {
  const { child } = server.proc;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

/** Two instances on the PostgreSQL 100k project behind nginx, both pinned to the server core with nginx. */
async function twoInstances(ctx: Context, ds: Dataset) {
  const servers = { a: await instance(ctx, ds, PORTS.a, "bench-a"), b: await instance(ctx, ds, PORTS.b, "bench-b") };
  const proxy = await startNginxSite(ctx, PORTS.nginx, [PORTS.a, PORTS.b], `${ds.dataDir}/objects`);
  return {
    servers,
    proxy,
    async stop() {
      await proxy.stop();
      await Promise.all(Object.values(servers).map((s) => s.stop()));
    },
  };
}

/**
 * P10-2: P10's mix (dashboard, project page, /api/grid, thumbnail) at 200 connections through nginx over two
 * instances, against one instance alone, on the PostgreSQL 100k project; rounds interleaved. Two cores cap the
 * gain (both instances and nginx share the server core): the figure is for the record, the goal is no errors.
 */
export const p10two: Metric = {
  id: "P10-2",
  title: "P10's mixed load through nginx over two instances (PostgreSQL 100k), beside one instance",
  goal: "0 errors over 60 s, p99 ≤ 1 s; req/s beside one instance's",
  needs: ["build", "pg-100k", "nginx"],
  async run(ctx) {
    const ds = await ctx.dataset("pg-100k");
    const paths = mixOf(ds);
    const pair = await twoInstances(ctx, ds);
    try {
      const cookie = await ctx.signIn(pair.proxy.url, ds);
      const options = { connections: CONNECTIONS, seconds: SECONDS, headers: { Cookie: cookie }, paths, countNon2xx: true };
      const twoRun = () => load(ctx, pair.proxy.url, options);
      const oneRun = () => load(ctx, pair.servers.a.url, options);
      // Warm: both instances through the proxy, then the one measured alone (JIT, memoized renders, pools).
      await load(ctx, pair.proxy.url, { ...options, seconds: 10 });
      await load(ctx, pair.servers.a.url, { ...options, seconds: 5 });
      const rounds = await interleave(ctx.rounds(ROUNDS), twoRun, oneRun, (r, a, b) =>
        ctx.log(
          `    round ${r + 1}: two instances ${a.rps.toFixed(0)} req/s (p99 ${a.p99} ms, ${failures(a)} failed), ` +
            `one ${b.rps.toFixed(0)} req/s (p99 ${b.p99} ms, ${failures(b)} failed)`,
        ),
      );
      const errors = rounds.a.reduce((n, a) => n + failures(a), 0);
      const p99 = median(rounds.a.map((a) => a.p99));
      const rps = median(rounds.a.map((a) => a.rps));
      return {
        figure: p99,
        unit: "ms",
        absolute: { name: "req/s, two instances", value: rps, unit: "req/s" },
        checks: [
          { name: "p99", value: p99, unit: "ms", goal: "≤ 1000", pass: p99 <= 1000, rounds: "twoP99" },
          { name: "errors", value: errors, unit: "", goal: "0", pass: errors === 0 },
        ],
        subject: {
          "req/s": rps,
          "p50 ms": median(rounds.a.map((a) => a.p50)),
          "p99 ms": p99,
          "max ms": Math.max(...rounds.a.map((a) => a.max)),
          "ratio to one instance": median(rounds.a.map((a, i) => a.rps / rounds.b[i]!.rps)),
        },
        baseline: {
          "req/s": median(rounds.b.map((b) => b.rps)),
          "p99 ms": median(rounds.b.map((b) => b.p99)),
          errors: rounds.b.reduce((n, b) => n + failures(b), 0),
        },
        rounds: rounds.a.length,
        perRound: { twoRps: rounds.a.map((a) => a.rps), twoP99: rounds.a.map((a) => a.p99), oneRps: rounds.b.map((b) => b.rps) },
        notes: [
          `${CONNECTIONS} connections, each cycling through ${paths.length} paths; ${ROUNDS} rounds of ${SECONDS} s per side.`,
          "Both instances (each with NODE_OPTIONS=--v8-pool-size=1, as docs/deploy advises where instances share cores), nginx and PostgreSQL share the server core: on this 2-core machine a second instance cannot add CPU.",
        ],
      };
    } finally {
      await pair.stop();
    }
  },
};

/**
 * P12: a rolling restart under P10's load through nginx: 200 connections for as long as it takes to stop (SIGTERM,
 * drained) and start each of the two instances in turn, one after the other. Every request must succeed.
 */
export const p12: Metric = {
  id: "P12",
  title: "Rolling restart of two instances under P10's load through nginx (PostgreSQL 100k)",
  goal: "0 failed requests",
  needs: ["build", "pg-100k", "nginx"],
  async run(ctx) {
    const ds = await ctx.dataset("pg-100k");
    const paths = mixOf(ds);
    const pair = await twoInstances(ctx, ds);
    try {
      const cookie = await ctx.signIn(pair.proxy.url, ds);
      const seconds = 40;
      const loading = load(ctx, pair.proxy.url, {
        connections: CONNECTIONS,
        seconds,
        headers: { Cookie: cookie },
        paths,
        countNon2xx: true,
      });
      const steps: string[] = [];
      const started = Date.now();
      const at = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
      await new Promise((r) => setTimeout(r, 4000));
      for (const [name, port] of [
        ["a", PORTS.a],
        ["b", PORTS.b],
      ] as const) {
        steps.push(`${at()}: SIGTERM ${name}`);
        await drainStop(pair.servers[name]);
        steps.push(`${at()}: ${name} exited (drained)`);
        pair.servers[name] = await instance(ctx, ds, port, `bench-${name}`);
        steps.push(`${at()}: ${name} ready again`);
        // nginx sends it traffic again once its fail_timeout (5 s) has passed.
        await new Promise((r) => setTimeout(r, 6000));
      }
      if (Date.now() - started > (seconds - 2) * 1000) throw new Error(`The restarts outlasted the load: ${steps.join("; ")}`);
      const summary = await loading;
      const failed = failures(summary);
      ctx.log(`    ${summary.requests} requests, ${failed} failed; ${steps.join("; ")}`);
      return {
        figure: failed,
        unit: "failed",
        absolute: { name: "req/s during the restarts", value: summary.rps, unit: "req/s" },
        checks: [{ name: "failed requests", value: failed, unit: "", goal: "0", pass: failed === 0 }],
        subject: { requests: summary.requests, "req/s": summary.rps, "p99 ms": summary.p99, "max ms": summary.max, non2xx: summary.non2xx },
        baseline: { errors: summary.errors, timeouts: summary.timeouts },
        rounds: 1,
        perRound: {},
        notes: [`${CONNECTIONS} connections for ${seconds} s; ${steps.join("; ")}.`],
      };
    } finally {
      await pair.stop();
    }
  },
};
