import { sql, type Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * SQLite: `images_fts_vocab`, the words the full-text index holds (an `fts5vocab` view of it, no storage of its
 * own). A search's last word, a prefix, is spelled out as the words it stands for where FTS5 would otherwise merge
 * every such word's list of images whole (`prefixWords` in models/search.server.ts). PostgreSQL: nothing.
 */
export function searchVocabulary(dialect: Dialect): Migration {
  return {
    async up(db) {
      if (dialect === "sqlite") await sql`create virtual table images_fts_vocab using fts5vocab(images_fts, 'row')`.execute(db);
    },
  };
}
