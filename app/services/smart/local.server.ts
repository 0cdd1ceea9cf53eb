import { fold } from "~/lib/keywords-query";
import { MAX_TAGS } from "~/lib/smart-tags";
import type { VocabularyTag } from "~/models/vocabulary.server";
import { cosine, embed, tagVectors } from "./encoder.server";
import { firstSenseSynonyms, lemmaKey, wordsOf, type Word } from "./lexicon.server";

/**
 * The local smart search: a phrase becomes tags of the scope's own vocabulary, so every chip can match, each with
 * the reason it was proposed. Three stages (measured in research/smart-search.md, tuned by the quality test):
 * 1. the phrase's words, lemmatised, matched exactly against the lemmatised tags, longest first (1–3 words);
 * 2. the first WordNet sense of each word left over, kept only where a synonym is a tag;
 * 3. with the sentence encoder on, tags close in meaning to the whole phrase and to each word left over.
 */
export interface Reason {
  tag: string;
  /** words: the person's own words; synonym: a WordNet synonym of `from`; similar: close in meaning to `from`. */
  kind: "words" | "synonym" | "similar";
  from: string;
}

interface LocalOptions {
  embeddings: boolean;
  /** Where tag vectors come from: the database-backed store by default (tests give an in-memory one). */
  vectorsOf?: (keys: string[]) => Promise<Map<string, Float32Array>>;
}

/** Words that say nothing about what is in a picture (of a shop: every picture here is of one). */
const GENERIC = new Set(
  "have get be make do take go come see look show find want need like give use put keep seem try let image photo picture pic shot snap thing something anything stuff lot kind type sort some any many much few more most other another way one store shop product item people person".split(
    " ",
  ),
);
/**
 * Cut-offs of the encoder stage: the phrase's two closest tags, and each leftover word's closest. The research's 0.62
 * for words let in "cash register" for "worker"; 0.66 measured best on the quality test (0.70 lost correct tags).
 */
const PHRASE_TOP = 2;
const PHRASE_MIN = 0.55;
const WORD_MIN = 0.66;
const MAX_PROPOSED = 10;
const MAX_LEFTOVER = 8;
/** The encoder compares against the most used tags only (a 512-d dot product each). */
const MAX_COMPARED = 5000;

interface Index {
  byLemma: Map<string, VocabularyTag[]>;
  byText: Map<string, VocabularyTag[]>;
}
const indexes = new WeakMap<VocabularyTag[], Promise<Index>>();
/** Lemma keys by folded tag, across vocabularies (a vocabulary is rebuilt after every write; its tags mostly are not new). */
const lemmaKeys = new Map<string, string>();
const MAX_LEMMA_KEYS = 200_000;

function indexOf(vocabulary: VocabularyTag[]): Promise<Index> {
  let index = indexes.get(vocabulary);
  if (!index) {
    index = (async () => {
      const byLemma = new Map<string, VocabularyTag[]>();
      const byText = new Map<string, VocabularyTag[]>();
      for (const t of vocabulary) {
        let lemma = lemmaKeys.get(t.key);
        if (lemma === undefined) {
          if (lemmaKeys.size >= MAX_LEMMA_KEYS) lemmaKeys.clear(); // bounded: rebuilt from the next vocabulary
          lemmaKeys.set(t.key, (lemma = await lemmaKey(t.tag)));
        }
        const text = t.key
          .split(/[^\p{L}\p{N}\p{M}]+/u)
          .filter(Boolean)
          .join(" ");
        for (const [map, key] of [
          [byLemma, lemma],
          [byText, text],
        ] as const)
          if (key) map.set(key, [...(map.get(key) ?? []), t]);
      }
      return { byLemma, byText };
    })();
    indexes.set(vocabulary, index);
  }
  return index;
}

const isContent = (w: Word) => !w.stop && !GENERIC.has(w.lemma) && /\p{L}/u.test(w.text);

export async function localTags(phrase: string, vocabulary: VocabularyTag[], opts: LocalOptions): Promise<Reason[]> {
  if (!vocabulary.length) return [];
  const words = await wordsOf(phrase);
  const index = await indexOf(vocabulary);
  const proposed = new Map<string, Reason>();
  const propose = (tags: VocabularyTag[] | undefined, kind: Reason["kind"], from: string) => {
    for (const t of tags ?? []) if (!proposed.has(t.key) && proposed.size < MAX_PROPOSED) proposed.set(t.key, { tag: t.tag, kind, from });
    return Boolean(tags?.length);
  };

  // 1. The person's own words, longest phrases first; a word inside a matched phrase is not matched again alone.
  const used = words.map(() => false);
  const exact: { at: number; tags: VocabularyTag[]; text: string }[] = [];
  for (const n of [3, 2, 1])
    for (let i = 0; i + n <= words.length; i++) {
      const slice = words.slice(i, i + n);
      // One word must say something; a longer tag may start or end with a small word ("out of stock").
      if (used.slice(i, i + n).some(Boolean) || (n === 1 && !isContent(slice[0]!))) continue;
      const text = slice.map((w) => w.text).join(" ");
      const tags = index.byLemma.get(slice.map((w) => w.lemma).join(" ")) ?? index.byText.get(text);
      if (!tags) continue;
      exact.push({ at: i, tags, text });
      used.fill(true, i, i + n);
    }
  // In the phrase's order, as the person wrote them.
  for (const m of exact.sort((a, b) => a.at - b.at)) propose(m.tags, "words", m.text);
  // A long phrase of unknown words would make every stage below run per word: the first few say enough.
  const leftover = words.filter((w, i) => !used[i] && isContent(w)).slice(0, MAX_LEFTOVER);

  // 2. First-sense WordNet synonyms that are tags.
  const unmatched: Word[] = [];
  for (const w of leftover) {
    let hit = false;
    for (const synonym of await firstSenseSynonyms(w.lemma, w.pos)) {
      const lemma = await lemmaKey(synonym);
      hit = propose(index.byLemma.get(lemma) ?? index.byText.get(fold(synonym)), "synonym", w.text) || hit;
    }
    if (!hit) unmatched.push(w);
  }

  // 3. Close in meaning, only where words are still without a tag (the phrase's nearest tags would otherwise add
  // neighbours of what was already found exactly: "frozen pizza" → "frozen dessert"): the whole phrase's nearest
  // tags, and each such word's nearest. (Only when nothing else was found, the phrase's neighbours would cost a
  // quarter of the paraphrases' correct tags: 1.58 instead of 2.08 per query.)
  if (opts.embeddings && unmatched.length && proposed.size < MAX_PROPOSED) {
    const compared = vocabulary.slice(0, MAX_COMPARED);
    const [vectors, [phraseVector, ...wordVectors]] = await Promise.all([
      (opts.vectorsOf ?? tagVectors)(compared.map((t) => t.key)),
      embed([phrase, ...unmatched.map((w) => w.text)]),
    ]);
    const nearest = (v: Float32Array, min: number, top: number) =>
      compared
        .map((t) => ({ t, score: vectors.has(t.key) ? cosine(v, vectors.get(t.key)!) : -1 }))
        .filter((s) => s.score >= min && !proposed.has(s.t.key))
        .sort((a, b) => b.score - a.score)
        .slice(0, top)
        .map((s) => s.t);
    propose(nearest(phraseVector!, PHRASE_MIN, PHRASE_TOP), "similar", phrase.trim());
    unmatched.forEach((w, i) => propose(nearest(wordVectors[i]!, WORD_MIN, 1), "similar", w.text));
  }
  return [...proposed.values()].slice(0, MAX_TAGS);
}

/** What the panel says about the tags: which came from the person's words, and why the others were added. */
export function describe(phrase: string, reasons: Reason[]): string {
  if (!reasons.length) return `No tag of this library matches “${phrase}”. Add a tag to search by.`;
  const parts = reasons.map((r) =>
    r.kind === "words"
      ? `“${r.tag}”`
      : r.kind === "synonym"
        ? `“${r.tag}” (another word for “${r.from}”)`
        : `“${r.tag}” (close in meaning to “${r.from}”)`,
  );
  return `Images tagged ${list(parts)}, those with the most of these tags first.`;
}

const list = (parts: string[]) => (parts.length < 2 ? parts.join("") : `${parts.slice(0, -1).join(", ")} or ${parts.at(-1)}`);
