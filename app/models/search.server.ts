import { remember } from "~/lib/bounded-cache";
import { sql } from "kysely";
import { db, dialect } from "~/db/connection.server";
import { fts5Query, parseKeywords, phraseTerm, tsQuery, type Term } from "~/lib/keywords-query";

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

/** The FTS5 query of the terms, or of alternatives (each a list of terms) joined by OR, in the columns of `where`. */
const ftsMatch = (terms: Term[] | Term[][], where: MatchIn) => {
  const columns = FTS5_COLUMNS[where];
  const query = isAlternatives(terms) ? terms.map((t) => `(${fts5Query(t)})`).join(" OR ") : fts5Query(terms);
  return columns ? `${columns} : (${query})` : query;
};
const isAlternatives = (terms: Term[] | Term[][]): terms is Term[][] => Array.isArray(terms[0]);

/** A keyword match (derived table `m`): the image's id, and 1 when its title or keywords hold every term, else 0. */
export interface KeywordMatch {
  id: number;
  strong: number;
}
/** A smart search's tag match (derived table `s`): the image's id, and how many of the tags it holds. */
export interface TagMatch {
  id: number;
  n: number;
}

/**
 * Where the matches are joined: `driving` the statement (a project's search goes from its matches to their images,
 * reading them whole), or narrowing the rows of another driver (a board's). PostgreSQL plans driving matches apart
 * (`offset 0`): each match's rank is computed where it is read, and the planner cannot sort the matches by their rank
 * below the join and finish with an incremental sort, which it took for a rare word and misjudged (the 100k project,
 * a word in no image: 3 ms → 45 ms a page with the rank as the sort key's first column; a word in 10,000 images:
 * 38 → 24 ms apart). Narrowing matches stay flattened, so a board's few images are each looked up among them.
 */
export type MatchJoin = "driving" | "narrowing";
const apart = (join: MatchJoin) => (join === "driving" ? sql` offset 0` : sql``);

/**
 * The images matching every term, as a derived table to join on `images.id`: columns `id`, and `strong` (1 when the
 * title or keywords hold every term, else 0; the ranking's first tier), computed once per match. The query is driven
 * by the index: a common word costs its matches, not the project's size.
 */
export function keywordMatches(terms: Term[], where: Exclude<MatchIn, "strong">, join: MatchJoin) {
  if (dialect() === "postgres")
    return sql<KeywordMatch>`(select image_id as id,
      (doc @@ to_tsquery('simple', ${tsQuery(terms, "A")}))::int as strong
      from image_search where doc @@ to_tsquery('simple', ${tsQuery(terms, TS_WEIGHTS[where])})${apart(join)})`;
  // "limit -1" (no limit) keeps SQLite from flattening this into the outer join, where it would probe the full-text
  // index once per image of the scope (11.7 s instead of 36 ms for a common word on 100k images, bench P5).
  return sql<KeywordMatch>`(select rowid as id,
    (rowid in (select rowid from images_fts where images_fts match ${ftsMatch(terms, "strong")})) as strong
    from images_fts where images_fts match ${ftsMatch(terms, where)} limit -1)`;
}

/** The phrase terms of a smart search's tags (a tag without a word is dropped). */
export const tagTermsOf = (tags: string[] | undefined): Term[] => (tags ?? []).map(phraseTerm).filter((t): t is Term => t !== null);

/**
 * The images holding at least one of the tags (each a phrase, in the title or keywords, where tags live), as a
 * derived table to join on `images.id`: columns `id`, and `n`, how many of the tags the image holds (the ranking:
 * one noisy tag adds images at the end instead of emptying the result).
 */
export function tagMatches(tags: Term[], join: MatchJoin) {
  if (dialect() === "postgres") {
    const queries = tags.map((t) => sql`to_tsquery('simple', ${tsQuery([t], "A")})`);
    return sql<TagMatch>`(select image_id as id, ${sql.join(
      queries.map((q) => sql`(doc @@ ${q})::int`),
      sql` + `,
    )} as n from image_search where doc @@ (${sql.join(queries, sql` || `)})${apart(join)})`;
  }
  const each = tags.map((t) => sql`select rowid as id from images_fts where images_fts match ${ftsMatch([t], "strong")}`);
  return sql<TagMatch>`(select id, count(*) as n from (${sql.join(each, sql` union all `)}) group by id)`;
}

/**
 * The ids of the images matching every term (with `strong`: in the title or keywords), as a subquery for
 * `images.id in (…)` (or a derived table, column `id`): what a walk on SQLite checks each image against (keywordCheck;
 * `within` a range of ids, for a window of the walk), and what a project's facet counts start from.
 */
export function keywordIds(terms: Term[], where: "anywhere" | "strong", within?: IdWindow) {
  if (dialect() === "postgres") {
    const query = tsQuery(terms, TS_WEIGHTS[where]);
    const range = within ? sql` and image_id between ${within.ids.lo} and ${within.ids.hi}` : sql``;
    return sql<{ id: number }>`(select image_id as id from image_search where doc @@ to_tsquery('simple', ${query})${range})`;
  }
  // Cast: better-sqlite3 binds a number as REAL, and FTS5 seeks its doclists only for an integer rowid bound (with a
  // REAL one it reads every match: 5 ms instead of 0.1 ms for a word in 10% of a 1M project).
  const range = within ? sql` and rowid between cast(${within.ids.lo} as integer) and cast(${within.ids.hi} as integer)` : sql``;
  const match = within?.spelledOut ? ftsMatch(within.spelledOut, where) : ftsMatch(terms, where);
  return sql<{ id: number }>`(select rowid as id from images_fts where images_fts match ${match}${range})`;
}

/**
 * Whether the image `images.id` is one of a walk's tier: it holds every term in its title or keywords (`strong`), or
 * elsewhere only (`rest`). What a walk along a project's keyset index asks of each image; `within`: a window of the
 * walk's first tier (the rest is never windowed).
 *
 * SQLite: the image among the ids of keywordIds. PostgreSQL: the image's own row of `image_search`, looked up by its
 * key, behind `offset 0`, which keeps the check a sub-plan run per image (the planner flattens a plain EXISTS or IN
 * into a join). As a join it was planned by its estimates: a fresh dataset's statistics, 1% where 4% matched, made
 * the walk of "london" + two values on 100k images a parallel scan (50–96 ms, its workers started in 25–50) or a hash
 * join of every match with a sort (120 ms), instead of the walk (5 ms; bench P5-pg). The walk's attribute check is
 * fenced the same way (scopeQuery).
 */
export function keywordCheck(terms: Term[], tier: "strong" | "rest", within?: IdWindow) {
  const id = sql.ref("images.id");
  if (dialect() === "postgres") {
    const strong = sql`doc @@ to_tsquery('simple', ${tsQuery(terms, TS_WEIGHTS.strong)})`;
    const which = tier === "strong" ? strong : sql`doc @@ to_tsquery('simple', ${tsQuery(terms, TS_WEIGHTS.anywhere)}) and not ${strong}`;
    const range = within && tier === "strong" ? sql` and image_id between ${within.ids.lo} and ${within.ids.hi}` : sql``;
    return sql<boolean>`exists (select 1 from image_search where image_id = ${id} and ${which}${range} offset 0)`;
  }
  if (tier === "strong") return sql<boolean>`${id} in ${keywordIds(terms, "strong", within)}`;
  return sql<boolean>`${id} in ${keywordIds(terms, "anywhere")} and ${id} not in ${keywordIds(terms, "strong")}`;
}

/**
 * A range of ids a walk goes through (a window of a project's newest images), and the search's terms with the last
 * word's prefix spelled out (`prefixWords`), when it could be.
 */
export interface IdWindow {
  ids: { lo: number; hi: number };
  spelledOut?: Term[][] | null;
}

/**
 * The terms with the last word's prefix spelled out as the words the index holds ("london"* → "london" OR
 * "londoner"), as a list of alternatives; null when there is nothing to spell out, on PostgreSQL, or when the prefix
 * stands for more than 8 words. Why: with a range of ids, FTS5 seeks each word's list of images, but merges a
 * prefix's lists whole first (bench P5-1m: 4.2 ms for "london"* within 4,000 ids of a 1M project, 0.25 ms for
 * "london"). Reading the words costs 1.8 ms there, so they are kept per `key`, the project and its version: a new word
 * comes into the project with a write, which moves the version on.
 */
const spelled = new Map<string, Term[][] | null>();
export async function prefixWords(terms: Term[], key: string): Promise<Term[][] | null> {
  const last = terms.at(-1);
  if (dialect() !== "sqlite" || !last?.prefix) return null;
  const stem = last.tokens.at(-1)!;
  const cacheKey = `${key}|${fts5Query(terms)}`;
  if (spelled.has(cacheKey)) return spelled.get(cacheKey)!;
  // The words from the stem up to (not including) the stem with its last character the next one.
  const chars = [...stem];
  const past = chars.slice(0, -1).join("") + String.fromCodePoint(chars.at(-1)!.codePointAt(0)! + 1);
  const { rows } = await sql<{ term: string }>`select term from images_fts_vocab
    where term >= ${stem} and term < ${past} limit 9`.execute(db());
  const words = rows.map((r) => r.term).filter((w) => w.startsWith(stem));
  const out =
    words.length && words.length <= 8
      ? words.map((w) => [...terms.slice(0, -1), { tokens: [...last.tokens.slice(0, -1), w], prefix: false }])
      : null;
  remember(spelled, cacheKey, out, 1000);
  return out;
}

/**
 * Whether at least `n` images (of any project) hold every term in the title or keywords: a count that stops at n.
 * How common a word is changes slowly, so the answer is kept for a minute: the pages of a search ask once.
 */
const commonness = new Map<string, { common: boolean; at: number }>();
export async function strongMatchesAtLeast(terms: Term[], n: number): Promise<boolean> {
  const key = `${dialect()}|${n}|${fts5Query(terms)}`;
  const known = commonness.get(key);
  if (known && Date.now() - known.at < 60_000) return known.common;
  const common = await countStrongMatches(terms, n);
  remember(commonness, key, { common, at: Date.now() }, 1000);
  return common;
}

async function countStrongMatches(terms: Term[], n: number): Promise<boolean> {
  const query =
    dialect() === "postgres"
      ? sql<{ c: number }>`select count(*) as c from (select 1 from image_search
          where doc @@ to_tsquery('simple', ${tsQuery(terms, "A")}) limit ${n}) s`
      : sql<{ c: number }>`select count(*) as c from (select rowid from images_fts
          where images_fts match ${ftsMatch(terms, "strong")} limit ${n}) s`;
  return Number((await query.execute(db())).rows[0]?.c ?? 0) >= n;
}
