/**
 * P1 / P1b, in a process of its own (pinned by the harness): times the project grid's loader for one page of
 * 100 cards — page + total + version, the model calls the grid routes make — against a baseline, interleaved
 * in rounds, and prints one JSON object.
 *
 *   first: A = loader for the first page,       B = the bare keyset SELECT of that page (same SQL, no Kysely, sent
 *                                                   as the app sends it: better-sqlite3 prepared once, as the app's
 *                                                   statement cache does; pg unnamed, as the app's driver does)
 *   deep:  A = loader for page 1000 (1-based),  B = loader for the first page
 *   search: A = loader for the first page of a keyword search (`q`), B = the bare statements of that page (P5)
 *   facets: A = the attribute facets with the same search (every attribute's counts, as after a write: the counts
 *           are kept per version, so each call gets a new one), B = the same statements, bare, one after another (P5b)
 *
 * Input: argv[2] JSON { mode, rounds, batch, warmup, projectId, email, q?, named? } and the app's environment for the dataset.
 * The batch (calls per side per round) is capped to what fits in about 4 s; the output says what was used.
 */
import { performance } from "node:perf_hooks";
import SQLite from "better-sqlite3";
import type { CompiledQuery } from "kysely";
import pg from "pg";
import { config, loadConfig, setConfig } from "~/config.server";
import { db, sqliteSettings } from "~/db/connection.server";
import type { Actor } from "~/models/actor";
import { attributeFacets } from "~/models/facets.server";
import { cursorBefore, gridPage, gridTotal, type Cursor } from "~/models/grid.server";
import { projectScope, withFilter } from "~/models/scope.server";
import { findUserByEmail } from "~/models/users.server";
import { openDatabase } from "~/services/boot.server";
import { captureStatements } from "../lib/hot-paths";
import { summarise, type Summary } from "../lib/stats";

const args = JSON.parse(process.argv[2] ?? "{}") as {
  mode: "first" | "deep" | "search" | "facets";
  q?: string;
  /** PostgreSQL: also time the bare statements as named prepared statements (bareNamed), after the rest. */
  named?: boolean;
  rounds: number;
  batch: number;
  warmup: number;
  projectId: number;
  email: string;
};
const LIMIT = 100;
const DEEP_PAGE = 1000;

setConfig(loadConfig(process.env));
const cfg = config();
const connection = await openDatabase();
const user = await findUserByEmail(args.email);
if (!user) throw new Error(`No bench user ${args.email}`);
const actor: Actor = { id: user.id, role: user.role };
/** Search mode: the term, and the two most common values of the project's first attribute (`f`, OR'ed by the MIX rule). */
const filter = new URLSearchParams({ q: args.q ?? "" });
if (args.mode === "search" || args.mode === "facets") {
  const values = await db()
    .selectFrom("image_attribute_values as av")
    .innerJoin("attributes as a", "a.id", "av.attribute_id")
    .select(["av.attribute_id", "av.value", db().fn.countAll().as("n")])
    .where("a.project_id", "=", args.projectId)
    .where("av.attribute_id", "=", (eb) =>
      eb.selectFrom("attributes").select(eb.fn.min("id").as("id")).where("project_id", "=", args.projectId),
    )
    .groupBy(["av.attribute_id", "av.value"])
    .orderBy("n", "desc")
    .limit(2)
    .execute();
  for (const v of values) filter.append("f", `${v.attribute_id}:${v.value}`);
}
/** The project, narrowed by the search in search mode, as the grid route resolves it from its URL. */
const resolve = async () => {
  const project = await projectScope(actor, args.projectId);
  return args.mode === "search" || args.mode === "facets" ? withFilter(project, filter) : project;
};
let version = 0;
/** Facets mode: what the sidebar asks, with a version of its own per call (the counts are cached per version). */
const facets = async () => {
  const resolved = await resolve();
  return attributeFacets({ ...resolved, project: { ...resolved.project, version: --version } });
};
const scope = await resolve();
/** What the grid route does per request: resolve the scope (one query), then the page and the (cached) count. */
const loader = async (after: Cursor | null) => {
  const resolved = await resolve();
  return Promise.all([gridPage(resolved, { after, limit: LIMIT }), gridTotal(resolved)]);
};

/** The statements one loader call sends, as Kysely compiles them (captured through a logging instance). */
const captureQueries = (after: Cursor | null) => captureStatements(cfg.database, () => (args.mode === "facets" ? facets() : loader(after)));

/** The bare statement and a way to explain any captured statement, on the dataset's own database. */
async function rawDatabase() {
  if (cfg.database.dialect === "sqlite") {
    const raw = new SQLite(cfg.database.file, { readonly: true });
    sqliteSettings(raw, cfg.database.cacheMb, { readonly: true });
    return {
      prepare(q: CompiledQuery) {
        const stmt = raw.prepare(q.sql);
        return async () => stmt.all(...(q.parameters as unknown[]));
      },
      explain: async (q: CompiledQuery) =>
        (raw.prepare(`explain query plan ${q.sql}`).all(...(q.parameters as unknown[])) as { detail: string }[])
          .map((r) => r.detail)
          .join("; "),
      close: async () => raw.close(),
    };
  }
  const client = new pg.Client({ connectionString: cfg.database.url });
  await client.connect();
  let statements = 0;
  return {
    // Sent as the app sends its statements: unnamed, so parsed and planned for its values on every run. Koala never
    // names them (docs/perf/postgres.md, Prepared statements: generic plans made searches 3–5× slower, and PgBouncer
    // in transaction mode cannot keep them), so a named baseline would time a way of sending the app does not have.
    prepare(q: CompiledQuery) {
      const config = { text: q.sql, values: q.parameters as unknown[] };
      return async () => (await client.query(config)).rows;
    },
    /** The same statement named (parsed once; after five runs PostgreSQL may keep a generic plan): a reference only. */
    prepareNamed(q: CompiledQuery) {
      const config = { name: `bench-bare-${++statements}`, text: q.sql, values: q.parameters as unknown[] };
      return async () => (await client.query(config)).rows;
    },
    explain: async (q: CompiledQuery) =>
      (await client.query(`explain (analyze, buffers, costs off) ${q.sql}`, q.parameters as unknown[])).rows
        .map((r: Record<string, string>) => r["QUERY PLAN"])
        .join("\n"),
    close: () => client.end(),
  };
}

async function timeBatch(work: () => Promise<unknown>, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await work();
    samples.push(performance.now() - t);
  }
  return samples;
}

const deep = args.mode === "deep" ? await cursorBefore(scope, (DEEP_PAGE - 1) * LIMIT) : null;
const firstQueries = await captureQueries(null);
const pageQuery =
  args.mode === "facets"
    ? firstQueries.find((q) => /group by/.test(q.sql))
    : firstQueries.find((q) => /"images"."title"/.test(q.sql) && /order by/.test(q.sql));
if (!pageQuery) throw new Error("Could not find the page query among the loader's statements");
const raw = await rawDatabase();
// Search: the page's statements (a walk's window, its id range, then the page), bare, one after another; not the
// scope's, nor what the first call alone sends (the word's commonness, its prefix's words, the count: kept after).
// Facets: every statement the sidebar's counts send, bare, one after another.
const bareQueries =
  args.mode === "facets"
    ? firstQueries
    : args.mode === "search"
      ? firstQueries.filter((q) => /from "images"/.test(q.sql) && !/count\(/.test(q.sql))
      : [pageQuery];
const inTurn = (runs: (() => Promise<unknown>)[]) => async () => {
  for (const run of runs) await run();
};
const bare = inTurn(bareQueries.map((q) => raw.prepare(q)));

const [a, b] =
  args.mode === "deep" ? [() => loader(deep), () => loader(null)] : args.mode === "facets" ? [facets, bare] : [() => loader(null), bare];
/**
 * Warm-up until the JIT has settled: V8 keeps optimising a path as large as the loader's (Kysely, the models) for
 * thousands of calls, and each compile job runs on a background thread that shares the pinned core with the calls —
 * the slow samples that made P5's p99. Measured with `node --trace-opt` on P5's loader, batches of 200 calls: 62
 * optimisations in calls 200–400, 30 in 600–800, 12 in 1,000–1,200, 4 in 1,400–1,600; and on 2026-12-02 (the loader
 * as it is now) still TurboFan compiles of the walk (7 ms of compiling), the filter's parser (5 ms) and gridPage (25 ms)
 * between calls 4,000 and 5,400. With 3,000 calls of warm-up P5's ratio fell round by round (6.6× in the first of 9,
 * 1.3× in the last; median 1.75×); with 10,000, 0.6–1.5× in every round (median 1.29×, the same code). A server passes
 * 10,000 searches in its first hours and keeps what it compiled. So at least 10,000 calls (and `warmup`), at most 20 s
 * (a 1M project's slow calls stop by time), never less than a second.
 */
const warmupCalls = { a: 0, b: 0 };
async function warmUp(work: () => Promise<unknown>, side: "a" | "b"): Promise<number[]> {
  const samples = await timeBatch(work, args.warmup);
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  while (elapsed() < 1000 || (samples.length < Math.max(10_000, args.warmup) && elapsed() < 20_000))
    samples.push(...(await timeBatch(work, 10)));
  warmupCalls[side] = samples.length;
  return samples.slice(-args.warmup);
}
const warmA = await warmUp(a, "a");
const warmB = await warmUp(b, "b");
// Calls per side per round: as asked, but no more than fit in about 4 s (a slow loader on the 1M project would
// otherwise take minutes), and never fewer than 100 (facets: 10, each call recounts a 1M project).
const slowest = Math.max(summarise(warmA).p50, summarise(warmB).p50);
const batch = Math.max(args.mode === "facets" ? 10 : 100, Math.min(args.batch, Math.floor(4000 / slowest)));
const rounds: { a: Summary; b: Summary }[] = [];
for (let r = 0; r < args.rounds; r++) {
  // A B, then B A: the two sides alternate who goes first, so a drift in the machine's speed hits both alike.
  let sa: number[];
  let sb: number[];
  if (r % 2 === 0) {
    sa = await timeBatch(a, batch);
    sb = await timeBatch(b, batch);
  } else {
    sb = await timeBatch(b, batch);
    sa = await timeBatch(a, batch);
  }
  rounds.push({ a: summarise(sa), b: summarise(sb) });
}

// Where the loader's time goes: each model call alone, and the plans of the statements it sends.
const after = args.mode === "deep" ? deep : null;
const part = async (work: () => Promise<unknown>) => summarise(await timeBatch(work, Math.max(50, Math.floor(batch / 2)))).p50;
const breakdown = {
  scopeMs: await part(() => projectScope(actor, args.projectId)),
  pageMs: await part(() => gridPage(scope, { after, limit: LIMIT })),
  totalMs: await part(() => gridTotal(scope)),
};
const plans: { sql: string; plan: string }[] = [];
for (const q of await captureQueries(after))
  if (!plans.some((p) => p.sql === q.sql)) plans.push({ sql: q.sql, plan: await raw.explain(q) });
// PostgreSQL, when asked: the bare statements named, timed once after everything else, for reference (not the
// ratio's baseline: see rawDatabase). Warmed up first: PostgreSQL plans a named statement for its values five times
// before it may keep a generic plan.
const named = args.named && raw.prepareNamed ? inTurn(bareQueries.map((q) => raw.prepareNamed!(q))) : null;
const bareNamed = named ? (await timeBatch(named, Math.max(10, Math.min(50, batch))), summarise(await timeBatch(named, batch))) : null;
await raw.close();
await connection.close();
process.stdout.write(
  `${JSON.stringify({ dialect: cfg.database.dialect, batch, warmupCalls, rounds, bareNamed, breakdown, plans, bareSql: pageQuery.sql })}\n`,
);
