import { remember } from "~/lib/bounded-cache";
import { sql, type SelectQueryBuilder } from "kysely";
import { db, dialect } from "~/db/connection.server";
import { fold } from "~/lib/keywords-query";
import { selectedImageIds } from "./grid.server";
import { scopeKey, scopeVersion, visibleProjectIds, type GridScope } from "./scope.server";

/**
 * A scope's vocabulary: the tags (keywords) its images hold, what a smart search may propose so that every chip can
 * match. Tags that differ only in case or accents are one (the most used spelling shows).
 */
export interface VocabularyTag {
  tag: string;
  /** Folded: the key of its stored vector and of comparisons. */
  key: string;
  /** How many images of the scope hold it. */
  n: number;
}

/**
 * Where a vocabulary comes from: one project's or one board's images, at a version (any write to them moves it on).
 * Across projects the vocabulary is the union of each project's, for the projects the person belongs to *now*
 * (resolved on every request, so a removed member stops seeing a project's tags at once).
 */
interface Source {
  key: string;
  version: number;
  /** The source's live images, columns `id` and `keywords`. */
  images: () => SelectQueryBuilder<any, any, { id: number; keywords: string }>;
}

async function sourcesOf(scope: GridScope): Promise<Source[]> {
  const projectImages = (id: number) => () =>
    db().selectFrom("images").select(["images.id", "images.keywords"]).where("images.project_id", "=", id);
  if (scope.kind === "project")
    return [{ key: `p:${scope.project.id}`, version: scope.project.version, images: projectImages(scope.project.id) }];
  if (scope.kind === "all") {
    const projects = await db()
      .selectFrom("projects")
      .select(["id", "updated_at"])
      .where("id", "in", visibleProjectIds(scope.actor))
      .orderBy("id")
      .execute();
    return projects.map((p) => ({ key: `p:${p.id}`, version: Number(p.updated_at), images: projectImages(p.id) }));
  }
  const whole = { ...scope, filter: undefined };
  return [
    {
      key: scopeKey(whole),
      version: scopeVersion(whole),
      images: () =>
        selectedImageIds(whole, { all: true, ids: [] })
          .clearSelect()
          .select([sql.ref<number>("images.id").as("id"), sql.ref<string>("images.keywords").as("keywords")]),
    },
  ];
}

/**
 * Vocabularies kept per source, with the version they were read at. A newer version is read again before answering
 * when the last read was quick; when it was slow (a project of a million images takes seconds), the previous
 * vocabulary answers while the new one is read in the background: a smart search may then miss a tag added a moment
 * ago, never wait seconds after every edit. Concurrent first reads of a source share one query.
 */
interface Kept {
  version: number;
  vocabulary: VocabularyTag[];
  readMs: number;
  reading?: Promise<VocabularyTag[]>;
}
const kept = new Map<string, Kept>();
const firstReads = new Map<string, Promise<VocabularyTag[]>>();
const merged = new Map<string, VocabularyTag[]>();
const MAX_CACHED = 200;
const SLOW_READ_MS = 1000;

export async function scopeVocabulary(scope: GridScope): Promise<VocabularyTag[]> {
  const sources = await sourcesOf(scope);
  if (sources.length === 1) return vocabularyOf(sources[0]!);
  const key = sources.map((s) => `${s.key}@${s.version}`).join(",");
  const known = merged.get(key);
  if (known) return known;
  const vocabulary = mergeVocabularies(await Promise.all(sources.map(vocabularyOf)));
  remember(merged, key, vocabulary, MAX_CACHED);
  return vocabulary;
}

function vocabularyOf(source: Source): Promise<VocabularyTag[]> {
  const known = kept.get(source.key);
  if (known && known.version === source.version) return Promise.resolve(known.vocabulary);
  if (known && known.readMs >= SLOW_READ_MS) {
    known.reading ??= read(source).finally(() => (known.reading = undefined));
    known.reading.catch(() => {}); // a failed background read is tried again by the next search
    return Promise.resolve(known.vocabulary);
  }
  const shareKey = `${source.key}@${source.version}`;
  let reading = firstReads.get(shareKey);
  if (!reading) {
    reading = read(source).finally(() => firstReads.delete(shareKey));
    firstReads.set(shareKey, reading);
  }
  return reading;
}

async function read(source: Source) {
  const started = performance.now();
  const vocabulary = await readVocabulary(source.images());
  const known = kept.get(source.key);
  if (!known || known.version <= source.version)
    remember(kept, source.key, { version: source.version, vocabulary, readMs: performance.now() - started }, MAX_CACHED);
  return vocabulary;
}

/** Tags counted per folded key; the most used spelling shows (on a tie the first in code-point order). */
function mergeVocabularies(lists: VocabularyTag[][]) {
  return tally(lists.flat().map((t) => ({ tag: t.tag, n: t.n })));
}

/**
 * Images per statement when SQLite reads a vocabulary (a setting, so tests can take many slices). better-sqlite3 runs a statement on the event loop: read at
 * once, a project of 100k images held every other request for 1.3 s (a million: ten times that), and sorted 500,000
 * tags to group them. In slices of this many, each grouped on its own (~10 ms) with a turn of the loop between,
 * other requests go on, and the whole read takes 0.35 s.
 */
export const vocabularySettings = { slice: 2000 };

async function readVocabulary(images: SelectQueryBuilder<any, any, { id: number; keywords: string }>): Promise<VocabularyTag[]> {
  if (dialect() === "postgres") {
    const rows = await sql<{ tag: string; n: number }>`select k as tag, count(*) as n
      from (${images}) i, jsonb_array_elements_text(i.keywords::jsonb) k group by k`.execute(db());
    return tally(rows.rows);
  }
  const counts = new Map<string, number>();
  for (let after = 0; ;) {
    const edge = await sql<{ last: number | null }>`select max(id) as last
      from (select i.id from (${images}) i where i.id > ${after} order by i.id limit ${vocabularySettings.slice})`.execute(db());
    const last = edge.rows[0]?.last;
    if (last === null || last === undefined) break;
    const rows = await sql<{ tag: string; n: number }>`select k.value as tag, count(*) as n
      from (${images}) i, json_each(i.keywords) k where k.type = 'text' and i.id > ${after} and i.id <= ${last}
      group by k.value`.execute(db());
    for (const r of rows.rows) counts.set(r.tag, (counts.get(r.tag) ?? 0) + Number(r.n));
    after = last;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return tally([...counts].map(([tag, n]) => ({ tag, n })));
}

function tally(rows: { tag: string; n: number | string }[]): VocabularyTag[] {
  const byKey = new Map<string, VocabularyTag & { best: number }>();
  for (const r of rows) {
    const n = Number(r.n);
    const key = fold(r.tag).trim();
    if (!key) continue;
    const known = byKey.get(key);
    if (!known) byKey.set(key, { tag: r.tag, key, n, best: n });
    else {
      known.n += n;
      // The most used spelling shows; on a tie the first in code-point order, the same on both databases.
      if (n > known.best || (n === known.best && r.tag < known.tag)) Object.assign(known, { tag: r.tag, best: n });
    }
  }
  return [...byKey.values()].map(({ tag, key, n }) => ({ tag, key, n })).sort((a, b) => b.n - a.n || a.key.localeCompare(b.key));
}

/** Stored tag vectors by folded tag (those not stored yet are missing from the map). */
export async function storedTagVectors(keys: string[]): Promise<Map<string, Float32Array>> {
  const found = new Map<string, Float32Array>();
  for (let i = 0; i < keys.length; i += 500) {
    const rows = await db()
      .selectFrom("tag_vectors")
      .select(["tag", "vector"])
      .where("tag", "in", keys.slice(i, i + 500))
      .execute();
    for (const r of rows) {
      const bytes = Uint8Array.from(r.vector);
      found.set(r.tag, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    }
  }
  return found;
}

/** Keeps new tag vectors (a vector is computed once per tag: a concurrent insert of the same tag is a no-op). */
export async function storeTagVectors(vectors: Map<string, Float32Array>) {
  const rows = [...vectors].map(([tag, v]) => ({ tag, vector: new Uint8Array(v.buffer, v.byteOffset, v.byteLength) }));
  for (let i = 0; i < rows.length; i += 200)
    await db()
      .insertInto("tag_vectors")
      .values(rows.slice(i, i + 200))
      .onConflict((oc) => oc.column("tag").doNothing())
      .execute();
}
