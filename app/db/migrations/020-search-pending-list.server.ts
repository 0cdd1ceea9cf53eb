import { sql, type Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * PostgreSQL: the search index's pending list kept small (64 kB instead of the server's 4 MB). A GIN index collects
 * new entries in an unsorted pending list until it is full or a vacuum comes by, and every search reads the list
 * whole, so the planner costs it in: after a bulk keyword add to 5,000 images of a 50k project (141 pending pages),
 * searches and the smart search turned into sequential scans of `image_search` until the autovacuum ran
 * (tests/integration/pg-plans.test.ts, "aged"). With 64 kB the list is merged into the index as it fills: the same
 * writes took 3.1 s instead of 2.9 s (4.1 s with no pending list at all, `fastupdate = off`), and the plans held.
 * SQLite: nothing.
 */
export function searchPendingList(dialect: Dialect): Migration {
  return {
    async up(db) {
      if (dialect === "postgres") await sql`alter index image_search_doc set (gin_pending_list_limit = 64)`.execute(db);
    },
  };
}
