/**
 * Keyword search queries, as people type them, turned into terms the database can match safely. Shared by the
 * server (SQL) and the pages (echoing what was searched).
 *
 * Rules: words separated by spaces must all match; "quoted words" match as a phrase; the last word, typed without a
 * trailing space, matches as a prefix (2 letters at least); case and accents are folded. Nothing the user types is an
 * operator: quotes, brackets, `*`, `-`, `OR`, `NEAR(` are text. Words are cut at anything that is not a letter or a
 * digit (combining marks stay with their letter), as both databases' tokenizers cut the indexed text, so
 * "coca-cola" is the phrase "coca cola". Each database tokenizes the quoted tokens once more with its own rules.
 */
export const MAX_QUERY_LENGTH = 200;
export const MAX_TERMS = 16;
const MIN_PREFIX = 2;

export interface Term {
  /** Folded words: letters and digits only. More than one: a phrase. */
  tokens: string[];
  /** The last word matches as a prefix. */
  prefix: boolean;
}

/**
 * Lower case without Latin accents: how both indexes see text ("Crème" → "creme"). Only the combining accents of
 * U+0300–036F go, as SQLite's unicode61 `remove_diacritics 2` does: the marks of other scripts (Devanagari vowel
 * signs, the kana voicing mark, Hangul's composed syllables) stay, and the text is recomposed (NFC) afterwards.
 */
export const fold = (text: string) =>
  text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]+/g, "")
    .normalize("NFC")
    .toLowerCase();

/** PostgreSQL ignores words over 2 KB; tokens are cut so both dialects see the same (non-matching) word. */
const MAX_TOKEN = 100;
const tokensOf = (text: string) =>
  fold(text)
    .split(/[^\p{L}\p{N}\p{M}]+/u)
    .filter((token) => /[\p{L}\p{N}]/u.test(token))
    .map((token) => token.slice(0, MAX_TOKEN));

/** The search box's text as the URL carries it: trimmed, inner spaces collapsed, capped. */
export const cleanQuery = (raw: string | null | undefined) =>
  (raw ?? "").replace(/\s+/g, " ").trimStart().slice(0, MAX_QUERY_LENGTH).replace(/^ $/, "");

export function parseKeywords(raw: string): Term[] {
  const text = raw.slice(0, MAX_QUERY_LENGTH);
  const terms: (Term & { quoted: boolean; end: number })[] = [];
  // A balanced pair of quotes is a phrase; a lone quote is just a separator.
  for (const m of text.matchAll(/"([^"]*)"|([^\s"]+)/g)) {
    const tokens = tokensOf(m[1] ?? m[2] ?? "");
    if (tokens.length) terms.push({ tokens, prefix: false, quoted: m[1] !== undefined, end: m.index + m[0].length });
  }
  const last = terms.at(-1);
  if (last && !last.quoted && last.end === text.length && last.tokens.at(-1)!.length >= MIN_PREFIX) last.prefix = true;
  return terms.slice(0, MAX_TERMS).map(({ tokens, prefix }) => ({ tokens, prefix }));
}

/** A text as one phrase term (a smart search's tag: all its words, in order, no prefix); null when it has no word. */
export function phraseTerm(text: string): Term | null {
  const tokens = tokensOf(text.slice(0, MAX_QUERY_LENGTH));
  return tokens.length ? { tokens, prefix: false } : null;
}

/** FTS5 MATCH text: every term a quoted string (tokens hold no quotes), AND between them. */
export const fts5Query = (terms: Term[]) => terms.map((t) => `"${t.tokens.join(" ")}"${t.prefix ? "*" : ""}`).join(" AND ");

/**
 * PostgreSQL tsquery text for to_tsquery('simple', …): every token a quoted lexeme, phrases with <->, a prefix as :*,
 * AND between terms. `weight` restricts every lexeme to a weight class (A: title and keywords).
 */
export const tsQuery = (terms: Term[], weight = "") =>
  terms
    .map((t) => {
      const lexemes = t.tokens.map((tok, i) => `'${tok}'${i === t.tokens.length - 1 && t.prefix ? ":*" : ""}`);
      const weighted = weight ? lexemes.map((l) => (l.includes(":*") ? `${l}${weight}` : `${l}:${weight}`)) : lexemes;
      return weighted.length > 1 ? `(${weighted.join(" <-> ")})` : weighted[0];
    })
    .join(" & ");
