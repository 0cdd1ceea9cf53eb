import { setTimeout } from "node:timers/promises";
import { sql, type SelectQueryBuilder, type Transaction } from "kysely";
import { db } from "~/db/connection.server";
import type { Database } from "~/db/schema";
import { chunksOf } from "~/lib/chunks";
import { refreshImageFacets } from "./image-facets.server";

export type Trx = Transaction<Database>;

const chunks = <T>(list: T[]) => chunksOf(list, 500);

/**
 * What a write changed. Writers name what they touched; `write` moves the versions on, in one place.
 * Versions are the projects' and boards' `updated_at`: ETags, cached counts and the grid's "New Data Loaded"
 * check all follow them, so a write that forgot to move them would leave every open grid stale.
 */
export class Touched {
  readonly projects = new Set<number>();
  readonly boards = new Set<string>();
  /** Per project, the images whose attribute values changed. */
  readonly valuesChanged = new Map<number, Set<number>>();
  /** The projects where a write may have taken an image's last value away (their folded rows may have to go). */
  readonly valuesRemoved = new Set<number>();
  constructor(private trx: Trx) {}

  /**
   * Images of a project whose attribute values this write changed (so the project changed too): their folded values
   * (image-facets.server.ts), which the sidebar's counts read, are refreshed before the write commits. `removed: false`
   * says the write only set values (an upsert), so no image was left without any.
   */
  attributeValues(projectId: number, imageIds: Iterable<number>, { removed = true }: { removed?: boolean } = {}) {
    this.project(projectId);
    if (removed) this.valuesRemoved.add(projectId);
    const known = this.valuesChanged.get(projectId) ?? new Set<number>();
    for (const id of imageIds) known.add(id);
    this.valuesChanged.set(projectId, known);
    return this;
  }

  project(id: number) {
    this.projects.add(id);
    return this;
  }
  board(id: string) {
    this.boards.add(id);
    return this;
  }
  /** Every board the images are on now (their cards changed, or they are about to leave): read at once. */
  async boardsHolding(imageIds: number[]) {
    for (const ids of chunks([...new Set(imageIds)])) {
      const rows = await this.trx.selectFrom("board_images").select("board_id").distinct().where("image_id", "in", ids).execute();
      for (const r of rows) this.boards.add(r.board_id);
    }
    return this;
  }
  /** Every board of a project (what the project's attributes are named in: every board's filters change). */
  async boardsOfProject(projectId: number) {
    const rows = await this.trx.selectFrom("boards").select("id").where("project_id", "=", projectId).execute();
    for (const r of rows) this.boards.add(r.id);
    return this;
  }
  /** Every board holding any image of a subquery (set-based: a large selection is never read into memory). */
  async boardsHoldingAny(imageIds: SelectQueryBuilder<any, any, { id: number }>) {
    const rows = await this.trx.selectFrom("board_images").select("board_id").distinct().where("image_id", "in", imageIds).execute();
    for (const r of rows) this.boards.add(r.board_id);
    return this;
  }
}

/**
 * A version after a write: now, or one past the current value when that is not older, so two writes in the same
 * millisecond still give two versions (the cached counts rely on it).
 */
const nextVersion = (at: number) => sql<number>`case when updated_at >= ${at} then updated_at + 1 else ${at} end`;

async function bump(trx: Trx, touched: Touched, at: number) {
  for (const ids of chunks([...touched.boards]))
    await trx
      .updateTable("boards")
      .set({ updated_at: nextVersion(at) })
      .where("id", "in", ids)
      .execute();
  for (const ids of chunks([...touched.projects]))
    await trx
      .updateTable("projects")
      .set({ updated_at: nextVersion(at) })
      .where("id", "in", ids)
      .execute();
}

/**
 * Runs a write in one transaction (SQLite: BEGIN IMMEDIATE); before it commits, the versions of everything it
 * touched move on. Every model write goes through here. `work` must not do storage or network I/O: it runs
 * under the database's write lock. It may run more than once (see WRITE_ATTEMPTS): what it changes outside the
 * transaction, it must set, not add to.
 */
export async function write<T>(work: (trx: Trx, touched: Touched) => Promise<T>, at = Date.now()): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db()
        .transaction()
        .execute(async (trx) => {
          const touched = new Touched(trx);
          const result = await work(trx, touched);
          for (const [projectId, ids] of touched.valuesChanged)
            await refreshImageFacets(trx, projectId, [...ids], { removed: touched.valuesRemoved.has(projectId) });
          await bump(trx, touched, at);
          return result;
        });
    } catch (err) {
      if (attempt >= WRITE_ATTEMPTS || !endedByDatabase(err)) throw err;
      await setTimeout(5 * attempt * (0.5 + Math.random()));
    }
  }
}

/**
 * PostgreSQL ends a transaction to break a deadlock (40P01) or a serialization conflict (40001); the other one goes
 * on, and this one, run again, then finds its rows free. Deadlocks happen: every write takes its project's row last
 * (its version), and some take it first (a delete, as uploads do), so a delete and a background write to the same
 * image (an OCR reading just saved) could each hold what the other waits for; the person's Skip this upload got a
 * 500 (an e2e run on PostgreSQL). SQLite has one writer at a time and never ends one so.
 */
const WRITE_ATTEMPTS = 4;
const endedByDatabase = (err: unknown) => ["40P01", "40001"].includes(String((err as { code?: unknown } | null)?.code));

/**
 * A unique constraint refused a row: a concurrent write took the name (or key) between a check and an insert.
 * Callers answer as their own check would have (a 409).
 */
export const isUniqueViolation = (err: unknown) => /unique|duplicate key/i.test(String((err as Error)?.message));
