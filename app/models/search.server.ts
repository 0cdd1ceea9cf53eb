import { sql, type RawBuilder } from "kysely";
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

/** `images.id` is among the images matching every term. */
export function keywordMatch(terms: Term[], where: MatchIn = "anywhere"): RawBuilder<boolean> {
  if (dialect() === "postgres")
    return sql<boolean>`images.id in (select image_id from image_search where doc @@ to_tsquery('simple', ${tsQuery(terms, TS_WEIGHTS[where])}))`;
  const columns = FTS5_COLUMNS[where];
  const match = columns ? `${columns} : (${fts5Query(terms)})` : fts5Query(terms);
  return sql<boolean>`images.id in (select rowid from images_fts where images_fts match ${match})`;
}
