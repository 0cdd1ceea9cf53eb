import { sql, type Kysely, type Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * Keyword search in the database, over title, keywords, description, OCR text and the original file name. Replaces
 * the first migration's index (no file name, no prefix index; on PostgreSQL no accent folding, and a tsvector column
 * on `images` that every `select *` carried along).
 * SQLite: an FTS5 index kept by triggers (unicode61 folds case and accents). PostgreSQL: a tsvector per image in
 * `image_search`, kept by a trigger, GIN-indexed; title and keywords weigh A (for ranking), description and OCR
 * text B, the file name C (a share link without downloads searches without it).
 * Both sides cut words at anything that is not a letter or a digit, as the query parser does (keywords-query.ts).
 */
export function keywordSearch(dialect: Dialect): Migration {
  return { up: (db) => (dialect === "postgres" ? upPostgres(db) : upSqlite(db)) };
}

const COLUMNS = ["title", "keywords", "description", "ocr_text", "original_name"] as const;

async function upSqlite(db: Kysely<any>) {
  const cols = COLUMNS.join(", ");
  const values = (row: "new" | "old") => COLUMNS.map((c) => `${row}.${c}`).join(", ");
  for (const statement of [
    "drop trigger images_fts_insert",
    "drop trigger images_fts_delete",
    "drop trigger images_fts_update",
    "drop table images_fts",
    `create virtual table images_fts using fts5(${cols}, content='images', content_rowid='id',
       tokenize='unicode61 remove_diacritics 2', prefix='2 3')`,
    `create trigger images_fts_insert after insert on images begin
       insert into images_fts(rowid, ${cols}) values (new.id, ${values("new")}); end`,
    `create trigger images_fts_delete after delete on images begin
       insert into images_fts(images_fts, rowid, ${cols}) values ('delete', old.id, ${values("old")}); end`,
    `create trigger images_fts_update after update of ${cols} on images begin
       insert into images_fts(images_fts, rowid, ${cols}) values ('delete', old.id, ${values("old")});
       insert into images_fts(rowid, ${cols}) values (new.id, ${values("new")}); end`,
    `insert into images_fts(images_fts) values ('rebuild')`,
  ])
    await sql.raw(statement).execute(db);
}

/**
 * koala_fold(text): recomposed (NFC), lower case, Latin accents off, punctuation to spaces, without the unaccent
 * extension (which a hosted database may not offer). The accented letters are those of U+00C0–024F whose fold() is
 * one other letter, so the index folds as the query does; the punctuation is ASCII's and the common typographic
 * marks (quotes, dashes, ellipsis, guillemets, no-break space), which PostgreSQL's parser would otherwise keep inside
 * words in some locales. Case folding beyond Latin follows the database's locale: use a UTF-8 one (docs/operations.md).
 */
/**
 * The search's fold as it was when this migration was written (lib/keywords-query.ts): a migration is history and
 * must not change when the live code does, so it keeps its own copy.
 */
const fold = (text: string) =>
  text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]+/g, "")
    .normalize("NFC")
    .toLowerCase();

export function foldTable() {
  let from = "";
  let to = "";
  for (let cp = 0xc0; cp <= 0x24f; cp++) {
    const ch = String.fromCodePoint(cp);
    const folded = fold(ch);
    if (folded.length === 1 && folded !== ch) {
      from += ch;
      to += folded;
    }
  }
  for (const ch of "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\u00a0\u00ab\u00b7\u00bb\u2010\u2011\u2012\u2013\u2014\u2018\u2019\u201a\u201c\u201d\u201e\u2022\u2026") {
    from += ch;
    to += " ";
  }
  const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
  return { from: literal(from), to: literal(to) };
}

async function upPostgres(db: Kysely<any>) {
  const { from, to } = foldTable();
  const vector = (row: string) =>
    `setweight(to_tsvector('simple'::regconfig, koala_fold(${row}.title || ' ' || ${row}.keywords)), 'A') ||
     setweight(to_tsvector('simple'::regconfig, koala_fold(${row}.description || ' ' || ${row}.ocr_text)), 'B') ||
     setweight(to_tsvector('simple'::regconfig, koala_fold(${row}.original_name)), 'C')`;
  for (const statement of [
    "alter table images drop column search",
    `create function koala_fold(text) returns text language sql immutable strict parallel safe
       as $$ select translate(lower(normalize($1, NFC)), ${from}, ${to}) $$`,
    `create table image_search (
       image_id integer primary key references images(id) on delete cascade,
       doc tsvector not null)`,
    `create index image_search_doc on image_search using gin (doc)`,
    `create function koala_image_search() returns trigger language plpgsql as $$ begin
       insert into image_search (image_id, doc) values (new.id, ${vector("new")})
       on conflict (image_id) do update set doc = excluded.doc;
       return null; end $$`,
    `create trigger images_search after insert or update of ${COLUMNS.join(", ")} on images
       for each row execute function koala_image_search()`,
    `insert into image_search (image_id, doc) select i.id, ${vector("i")} from images i`,
  ])
    await sql.raw(statement).execute(db);
}
