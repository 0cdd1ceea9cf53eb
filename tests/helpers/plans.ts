import { CompiledQuery, type Compilable } from "kysely";
import { db, dialect } from "~/db/connection.server";

/**
 * The database's own plan of a statement, for tests of a property a statement's shape exists for (which side drives a
 * join, what a sort carries): SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN (VERBOSE, FORMAT JSON).
 */

/** One row of SQLite's EXPLAIN QUERY PLAN: a step, under its parent step (0: the statement itself). */
export interface SqlitePlanRow {
  id: number;
  parent: number;
  detail: string;
}

export async function sqlitePlan(query: Compilable): Promise<SqlitePlanRow[]> {
  if (dialect() !== "sqlite") throw new Error("sqlitePlan needs SQLite");
  const { sql, parameters } = query.compile();
  return (await db().executeQuery<SqlitePlanRow>(CompiledQuery.raw(`explain query plan ${sql}`, [...parameters]))).rows;
}

/** The steps under the step whose detail matches `top` (itself excluded), in plan order. */
export function under(rows: SqlitePlanRow[], top: RegExp): SqlitePlanRow[] {
  const root = rows.find((r) => top.test(r.detail));
  if (!root) return [];
  const inside = new Set([root.id]);
  const found: SqlitePlanRow[] = [];
  for (const r of rows)
    if (inside.has(r.parent)) {
      inside.add(r.id);
      found.push(r);
    }
  return found;
}

/** A node of PostgreSQL's JSON plan (the fields the tests read). */
export interface PgPlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Recheck Cond"?: string;
  Filter?: string;
  Output?: string[];
  "Sort Key"?: string[];
  /** With EXPLAIN ANALYZE: loops, and the rows (per loop) a filter or a recheck threw away. */
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: PgPlanNode[];
}

export async function postgresPlan(query: Compilable): Promise<PgPlanNode> {
  if (dialect() !== "postgres") throw new Error("postgresPlan needs PostgreSQL");
  const { sql, parameters } = query.compile();
  const { rows } = await db().executeQuery<{ "QUERY PLAN": [{ Plan: PgPlanNode }] }>(
    CompiledQuery.raw(`explain (verbose, format json) ${sql}`, [...parameters]),
  );
  return rows[0]!["QUERY PLAN"][0].Plan;
}

/** A node and every node under it. */
export const pgNodes = (node: PgPlanNode): PgPlanNode[] => [node, ...(node.Plans ?? []).flatMap(pgNodes)];
