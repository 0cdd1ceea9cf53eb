import { sql } from "kysely";
import { dialect } from "~/db/connection.server";
import { fts5Query, parseKeywords, tsQuery, type Term } from "~/lib/keywords-query";

/**
 * Keyword search conditions over `images` (the indexes are kept by triggers, migration 009). The user's text never
 * reaches the database as query syntax: it is parsed into folded letter-and-digit tokens first (keywords-query.ts)
 * and bound as a parameter.
 */

/** The terms of a search box's text; empty when it holds no word at all (then nothing is filtered). */
export const termsOf = (q: string | undefined): Term[] => (q ? parseKeywords(q) : []);

/**
 * Where the terms must be found: anywhere; `strong`: in the title or keywords (the ranking's first tier);
 * `noFileName`: anywhere but the original file name (a share link without downloads never shows it).
 */
export type MatchIn = "anywhere" | "strong" | "noFileName";

const FTS5_COLUMNS: Record<MatchIn, string | null> = {
  anywhere: null,
  strong: "{title keywords}",
  noFileName: "{title keywords description ocr_text}",
};
const TS_WEIGHTS: Record<MatchIn, string> = { anywhere: "", strong: "A", noFileName: "AB" };

const ftsMatch = (terms: Term[], where: MatchIn) => {
  const columns = FTS5_COLUMNS[where];
  return columns ? `${columns} : (${fts5Query(terms)})` : fts5Query(terms);
};

/**
 * The images matching every term, as a derived table to join on `images.id`: columns `id`, and `strong` (1 when the
 * title or keywords hold every term, else 0; the ranking's first tier), computed once per match. The query is driven
 * by the index: a common word costs its matches, not the project's size.
 */
export function keywordMatches(terms: Term[], where: Exclude<MatchIn, "strong"> = "anywhere") {
  if (dialect() === "postgres")
    return sql<{ id: number; strong: number }>`(select image_id as id,
      (doc @@ to_tsquery('simple', ${tsQuery(terms, "A")}))::int as strong
      from image_search where doc @@ to_tsquery('simple', ${tsQuery(terms, TS_WEIGHTS[where])}))`;
  // "limit -1" (no limit) keeps SQLite from flattening this into the outer join, where it would probe the full-text
  // index once per image of the scope (11.7 s instead of 36 ms for a common word on 100k images, bench P5).
  return sql<{ id: number; strong: number }>`(select rowid as id,
    (rowid in (select rowid from images_fts where images_fts match ${ftsMatch(terms, "strong")})) as strong
    from images_fts where images_fts match ${ftsMatch(terms, where)} limit -1)`;
}
