import { sql, type Migration } from "kysely";
import type { Dialect } from "../connection.server";
import { foldTable } from "./009-keyword-search.server";

/**
 * PostgreSQL only (SQLite: nothing; FTS5 folds on its own):
 * - `koala_fold` gives what it gave, faster. `translate` looks each character up in its 360-character table, so
 *   folding an image's 370 characters of text cost 0.53 ms, paid by every write of an image (three folds each) and
 *   ~10 minutes by a load of 1M images. Text that is all ASCII (the usual) needs no recomposing and no accent table:
 *   a regular expression turns its punctuation to spaces in 0.02 ms. Other text still takes the table.
 * - An image's search document (migration 009's weighted tsvector) is a function of its five columns,
 *   `koala_image_doc`, which the trigger calls, so that a bulk load can skip the trigger and fill `image_search` in
 *   one statement (models/bulk-load.server.ts).
 */
export function searchDocument(dialect: Dialect): Migration {
  return {
    async up(db) {
      if (dialect !== "postgres") return;
      const { from, to } = foldTable();
      await sql
        .raw(
          `create or replace function koala_fold(text) returns text language sql immutable strict parallel safe as $$ select
             case when $1 ~ '[^\\x01-\\x7f]' then translate(lower(normalize($1, NFC)), ${from}, ${to})
             else regexp_replace(lower($1), '[!-/:-@\\[-\`{-~]', ' ', 'g') end $$`,
        )
        .execute(db);
      await sql`create function koala_image_doc(title text, keywords text, description text, ocr_text text, original_name text)
        returns tsvector language sql immutable parallel safe as $$ select
          setweight(to_tsvector('simple'::regconfig, koala_fold(title || ' ' || keywords)), 'A') ||
          setweight(to_tsvector('simple'::regconfig, koala_fold(description || ' ' || ocr_text)), 'B') ||
          setweight(to_tsvector('simple'::regconfig, koala_fold(original_name)), 'C') $$`.execute(db);
      await sql`create or replace function koala_image_search() returns trigger language plpgsql as $$ begin
        insert into image_search (image_id, doc)
          values (new.id, koala_image_doc(new.title, new.keywords, new.description, new.ocr_text, new.original_name))
        on conflict (image_id) do update set doc = excluded.doc;
        return null; end $$`.execute(db);
    },
  };
}
