/**
 * P15, in a process of its own: the near-duplicate lookup of one new picture in the dataset's project (the model call
 * an upload makes: the indexed quarters of its hash, every turn, then both hashes checked), against the bare SQL of
 * one quarter's exact look-up (one seek of the covering index, migration 027: the least any indexed lookup costs). Half the pictures are copies of
 * one of the project's images (a few bits changed: found), half strangers (found nothing), interleaved in rounds.
 * Prints one JSON object.
 *
 * Input: argv[2] JSON { rounds, batch, projectId } and the app's environment for the dataset.
 */
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { loadConfig, setConfig } from "~/config.server";
import { db } from "~/db/connection.server";
import { bandsOf, type Similarity } from "~/lib/similarity";
import { lookAlikes } from "~/models/duplicates.server";
import { openDatabase } from "~/services/boot.server";
import { seeded } from "~/services/demo.server";
import { summarise, type Summary } from "../lib/stats";

const args = JSON.parse(process.argv[2] ?? "{}") as { rounds: number; batch: number; projectId: number };
setConfig(loadConfig(process.env));
const connection = await openDatabase();
const rnd = seeded(15_015);
const hex16 = () =>
  Array.from({ length: 4 }, () =>
    Math.floor(rnd() * 0x10000)
      .toString(16)
      .padStart(4, "0"),
  ).join("");
/** A hash with `n` of its 64 bits flipped at random. */
const flip = (hash: string, n: number) => {
  let bits = BigInt(`0x${hash}`);
  for (const bit of new Set(Array.from({ length: n }, () => Math.floor(rnd() * 64)))) bits ^= 1n << BigInt(bit);
  return bits.toString(16).padStart(16, "0");
};
const turnedLike = (): Similarity["turned"] => [0, 1, 2].map(() => ({ phash: hex16(), dhash: hex16() }));

const { n, first, last } = await db()
  .selectFrom("images")
  .select([sql<number>`count(*)`.as("n"), sql<number>`min(id)`.as("first"), sql<number>`max(id)`.as("last")])
  .where("project_id", "=", args.projectId)
  .executeTakeFirstOrThrow();
const pictures = async (count: number): Promise<{ similarity: Similarity; copy: boolean }[]> => {
  const out: { similarity: Similarity; copy: boolean }[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 2) {
      out.push({ similarity: { phash: hex16(), dhash: hex16(), turned: turnedLike() }, copy: false });
      continue;
    }
    // A random image of the project by its id (a primary-key seek): an OFFSET walked up to a million rows for each,
    // which emptied the page cache between the timed lookups.
    const row = await db()
      .selectFrom("images")
      .select(["phash", "dhash"])
      .where("project_id", "=", args.projectId)
      .where("id", ">=", Number(first) + Math.floor(rnd() * (Number(last) - Number(first) + 1)))
      .orderBy("id")
      .limit(1)
      .executeTakeFirstOrThrow();
    out.push({ similarity: { phash: flip(row.phash!, 3), dhash: flip(row.dhash!, 3), turned: turnedLike() }, copy: true });
  }
  return out;
};

const bare = (phash: string) =>
  db()
    .selectFrom("images")
    .select(["id", "phash"])
    .where("project_id", "=", args.projectId)
    .where("ph0", "=", bandsOf(phash)[0]!)
    .execute();

const time = async (work: () => Promise<unknown>) => {
  const t = performance.now();
  await work();
  return performance.now() - t;
};

let found = 0;
let copies = 0;
let candidates = 0;
const rounds: { a: Summary; b: Summary }[] = [];
for (const p of await pictures(20)) await lookAlikes(db(), args.projectId, p.similarity, { limit: 1 }); // warm-up
for (let r = 0; r < args.rounds; r++) {
  const set = await pictures(args.batch);
  const a: number[] = [];
  const b: number[] = [];
  for (const p of set) {
    let hit: Awaited<ReturnType<typeof lookAlikes>> = [];
    a.push(await time(async () => (hit = await lookAlikes(db(), args.projectId, p.similarity, { limit: 1 }))));
    b.push(await time(async () => (candidates += (await bare(p.similarity.phash)).length)));
    if (p.copy) {
      copies += 1;
      if (hit.length) found += 1;
    }
  }
  rounds.push({ a: summarise(a), b: summarise(b) });
}
await connection.close();
process.stdout.write(
  `${JSON.stringify({ rounds, images: Number(n), found, copies, bareRowsPerSeek: candidates / (args.rounds * args.batch) })}\n`,
);
