import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from "kysely";
import SQLite from "better-sqlite3";
import pg from "pg";
import type { DatabaseConfig } from "~/config.server";
import { conn, pgPoolConfig, setConnection } from "~/db/connection.server";
import type { Database } from "~/db/schema";
import type { Actor } from "~/models/actor";
import { attributeFacets } from "~/models/facets.server";
import { countSelection, selectionRanges, selectionRows } from "~/models/bulk.server";
import { cursorBefore, decodeCursor, gridPage, gridTotal, type GridScope } from "~/models/grid.server";
import { boardScope, permissionsOf, projectScope, withFilter, type SharedBoardScope } from "~/models/scope.server";

/**
 * The statements a large project's pages and actions send, named: what the plans must hold up for at scale. Used by
 * the PostgreSQL plan test (tests/integration/pg-plans.test.ts, a 50k project: no sequential scan of a project's
 * tables) and by `bench/tools/pg-plans.ts`, which prints each statement's EXPLAIN (ANALYZE, BUFFERS) on a bench
 * dataset for docs/perf/postgres.md.
 */
export interface HotPathContext {
  actor: Actor;
  projectId: number;
  /** A board of the project holding some of its images, and a share link to it. */
  boardId: string;
  linkId: number;
  /** The `f` values of the search (the project's first attribute's two commonest, OR'ed). */
  values: string[];
  /** A word in about a tenth of the project's titles, and one in none. */
  common: string;
  rare: string;
}

export interface HotPath {
  name: string;
  run(ctx: HotPathContext): Promise<unknown>;
}

const filtered = <S extends GridScope>(scope: S, params: Record<string, string | string[]>) => {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of [v].flat()) search.append(k, one);
  return withFilter(scope, search);
};
const project = (ctx: HotPathContext) => projectScope(ctx.actor, ctx.projectId);
const board = (ctx: HotPathContext) => boardScope(ctx.actor, ctx.boardId, ctx.projectId);
const shared = async (ctx: HotPathContext): Promise<SharedBoardScope> => {
  const b = await board(ctx);
  return {
    kind: "shared",
    link: { id: ctx.linkId, allowDownload: true, showMetadata: true },
    project: b.project,
    board: b.board,
    can: permissionsOf("viewer"),
  };
};
/** The second page of a grid: the first page's cursor, then the page after it. */
const secondPage = async (scope: GridScope) =>
  gridPage(scope, { after: decodeCursor((await gridPage(scope, { limit: 100 })).next), limit: 100 });
const everything = { all: true, ids: [] };

export const HOT_PATHS: HotPath[] = [
  { name: "grid: first page", run: async (c) => gridPage(await project(c), { limit: 100 }) },
  { name: "grid: count", run: async (c) => gridTotal(await project(c)) },
  {
    name: "grid: deep page (a jump 20,000 in, then its page)",
    run: async (c) => {
      const scope = await project(c);
      return gridPage(scope, { after: await cursorBefore(scope, 20_000), limit: 100 });
    },
  },
  {
    name: "search: common word + two values, first page",
    run: async (c) => gridPage(filtered(await project(c), { q: c.common, f: c.values }), { limit: 100 }),
  },
  {
    name: "search: common word + two values, second page",
    run: async (c) => secondPage(filtered(await project(c), { q: c.common, f: c.values })),
  },
  { name: "search: common word, count", run: async (c) => gridTotal(filtered(await project(c), { q: c.common })) },
  { name: "search: rare word", run: async (c) => gridPage(filtered(await project(c), { q: `${c.rare} ` }), { limit: 100 }) },
  { name: "search: prefix", run: async (c) => gridPage(filtered(await project(c), { q: c.common.slice(0, 4) }), { limit: 100 }) },
  { name: "search: phrase", run: async (c) => gridPage(filtered(await project(c), { q: `"in ${c.common}"` }), { limit: 100 }) },
  { name: "facets: no search", run: async (c) => attributeFacets(await project(c)) },
  { name: "facets: common word + two values", run: async (c) => attributeFacets(filtered(await project(c), { q: c.common, f: c.values })) },
  {
    name: "smart search: two tags, first page",
    run: async (c) => gridPage(filtered(await project(c), { smart: "shelf photos", tags: `shelf, ${c.common}` }), { limit: 100 }),
  },
  { name: "board: first page", run: async (c) => gridPage(await board(c), { limit: 100 }) },
  { name: "board: search", run: async (c) => gridPage(filtered(await board(c), { q: c.common }), { limit: 100 }) },
  { name: "shared board: first page", run: async (c) => gridPage(await shared(c), { limit: 100 }) },
  { name: "shared board: search", run: async (c) => gridPage(filtered(await shared(c), { q: c.common }), { limit: 100 }) },
  {
    name: "bulk: count of a search's selection",
    run: async (c) => countSelection(filtered(await project(c), { q: c.common }), everything),
  },
  { name: "bulk: id ranges of the whole project", run: async (c) => selectionRanges(await project(c), everything, 2000) },
  { name: "export: a page of rows", run: async (c) => selectionRows(await project(c), everything, { afterId: 0, limit: 1000 }) },
];

/**
 * The statements `work` sends, as Kysely compiles them: it runs against a logging connection to the same database.
 * Two connections on PostgreSQL: a grid loader reads its page and its count at once (a count of a common word at
 * 10M takes seconds, and with one connection the page waited past the pool's connect timeout).
 */
export async function captureStatements(database: DatabaseConfig, work: () => Promise<unknown>): Promise<CompiledQuery[]> {
  const captured: CompiledQuery[] = [];
  const log = (event: { level: string; query: CompiledQuery }) => void (event.level === "query" && captured.push(event.query));
  const current = conn();
  const logging =
    database.dialect === "sqlite"
      ? new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(database.file) }), log })
      : new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool(pgPoolConfig(database, 2)) }), log });
  setConnection({ db: logging, dialect: current.dialect, close: () => logging.destroy() });
  try {
    await work();
  } finally {
    setConnection(current);
    await logging.destroy();
  }
  return captured;
}
