import { sql } from "kysely";
import { db } from "~/db/connection.server";
import { chunksOf } from "~/lib/chunks";
import { log } from "~/lib/log.server";
import {
  bandProbes,
  bandsOf,
  distance,
  MAX_PHASH_DISTANCE,
  MAX_TURNED_PHASH_DISTANCE,
  nearAny,
  type Fingerprint,
  type Similarity,
} from "~/lib/similarity";
import { requireEdit, type ProjectScope } from "./scope.server";
import { write, type Trx } from "./write.server";

/**
 * Near-duplicates in a project (decision 0028): the images that look like a picture, found through the indexed
 * quarters of their DCT hash (multi-index hashing: every image within the bound holds a probed value in some quarter,
 * so a lookup seeks a few hundred index entries instead of comparing every image), then checked against both hashes.
 */
export interface LookAlike {
  id: number;
  title: string;
  thumbKey: string;
  distance: number;
  /** The first image of its group of possible duplicates: itself, or the image it is a possible copy of. */
  group: number;
}

/** The hash columns of a new image's row (all null when the file was not hashed). */
export function hashColumns(similarity: Fingerprint | undefined) {
  if (!similarity) return { phash: null, dhash: null, ph0: null, ph1: null, ph2: null, ph3: null };
  const [ph0, ph1, ph2, ph3] = bandsOf(similarity.phash);
  return { phash: similarity.phash, dhash: similarity.dhash, ph0: ph0!, ph1: ph1!, ph2: ph2!, ph3: ph3! };
}

/**
 * Candidates a lookup reads at most from each quarter: far more than a project's true look-alikes; a bound on a
 * pathological cluster (thousands of blank pages alike in one quarter). The exact copies are read apart, first, so
 * the bound never hides them; reaching it is logged.
 */
export const lookupSettings = { maxPerQuarter: 5000 };
const QUARTERS = [0, 1, 2, 3] as const;
const quarterColumn = (q: number) => `ph${q}` as "ph0" | "ph1" | "ph2" | "ph3";

/**
 * The project's images that look like a picture (upright or turned), closest first (then oldest: the first of a
 * chain of copies), at most `limit`; `except`: an image to leave out (itself); `before`: only images older than this id.
 * Each quarter is its own statement on its own index (`images_project_phN_hash`), the rows joined here: SQLite planned an
 * OR of the four quarters as a walk of the whole project whenever its statistics were missing or old. The indexes
 * hold the DCT hash (migration 027), so the candidates are sifted from the index alone; the table is read only for
 * the few within the bound.
 */
export async function lookAlikes(
  q: Trx | ReturnType<typeof db>,
  projectId: number,
  similarity: Similarity,
  opts: { limit?: number; except?: number; before?: number } = {},
): Promise<LookAlike[]> {
  const prints = [similarity, ...similarity.turned];
  // The picture as it stands: each quarter's value and its one-bit neighbours (every image within 7 bits). Its turns:
  // each quarter's own value (every image within 3 bits of a turn: three differing bits leave a quarter with none),
  // 79 values instead of 268 (P15).
  const upright = bandProbes(similarity.phash);
  const probes = QUARTERS.map((quarter) => [
    ...new Set([...upright[quarter]!, ...similarity.turned.map((t) => bandsOf(t.phash)[quarter]!)]),
  ]);
  const candidates = (quarter: number, values: number[]) =>
    q
      .selectFrom("images")
      .select(["id", "phash"])
      .where("project_id", "=", projectId)
      .where(quarterColumn(quarter), "in", values)
      .$if(opts.except !== undefined, (s) => s.where("id", "!=", opts.except!))
      .$if(opts.before !== undefined, (s) => s.where("id", "<", opts.before!));
  // Exact copies (the same DCT hash, any turn) first, whatever the bound; then every quarter's probes.
  const exact = await candidates(0, [...new Set(prints.map((p) => bandsOf(p.phash)[0]!))])
    .where(
      "phash",
      "in",
      prints.map((p) => p.phash),
    )
    .execute();
  const near = await Promise.all(
    QUARTERS.map((quarter) => candidates(quarter, probes[quarter]!).limit(lookupSettings.maxPerQuarter).execute()),
  );
  if (near.some((rows) => rows.length >= lookupSettings.maxPerQuarter))
    log.warn("near-duplicate lookup reached its bound", { projectId, bound: lookupSettings.maxPerQuarter });
  const within = nearAny([similarity.phash], MAX_PHASH_DISTANCE);
  const withinTurned = nearAny(
    similarity.turned.map((t) => t.phash),
    MAX_TURNED_PHASH_DISTANCE,
  );
  const close = new Set<number>();
  for (const r of [...exact, ...near.flat()]) if (r.phash && (within(r.phash) || withinTurned(r.phash))) close.add(r.id);
  const found: LookAlike[] = [];
  for (const ids of chunksOf([...close], 1000)) {
    const rows = await q
      .selectFrom("images")
      .select(["id", "title", "thumb_key", "phash", "dhash", "dup_of"])
      .where("project_id", "=", projectId)
      .where("id", "in", ids)
      .execute();
    for (const r of rows) {
      if (!r.phash || !r.dhash) continue;
      const image = { phash: r.phash, dhash: r.dhash };
      const apart = [distance(similarity, image), ...similarity.turned.map((t) => distance(t, image, MAX_TURNED_PHASH_DISTANCE))].filter(
        (d): d is number => d !== null,
      );
      if (apart.length)
        found.push({ id: r.id, title: r.title, thumbKey: r.thumb_key, distance: Math.min(...apart), group: r.dup_of ?? r.id });
    }
  }
  return found.sort((a, b) => a.distance - b.distance || a.id - b.id).slice(0, opts.limit ?? 5);
}

/** An image as the Possible duplicates page shows it. */
export interface DuplicateImage {
  id: number;
  title: string;
  thumbKey: string;
  createdAt: number;
}

/** A group of possible duplicates: the first of them in the project, and the uploads that looked like it since. */
export interface DuplicateGroup {
  first: DuplicateImage;
  /** Newest first, at most COPIES_SHOWN of them. */
  copies: DuplicateImage[];
  /** How many copies the group has in all. */
  count: number;
}

/** Copies shown per group: a shelf photographed every day may have thousands waiting; the newest are shown. */
export const COPIES_SHOWN = 12;

const shownImage = (r: { id: number; title: string; thumb_key: string; created_at: number | string }): DuplicateImage => ({
  id: r.id,
  title: r.title,
  thumbKey: r.thumb_key,
  createdAt: Number(r.created_at),
});

/**
 * The project's groups of possible duplicates nobody has decided on: each the first image of its kind and the uploads
 * that looked like it (each copy names its group's first image, so a group is one level deep), the group with the
 * newest copy first; keyset-paged by that copy's id (`after`: the newest copy of the page's last group).
 */
export async function possibleDuplicates(scope: ProjectScope, opts: { after?: number | null; limit?: number } = {}) {
  const limit = Math.min(Math.max(opts.limit ?? 20, 1), 100);
  const groups = await db()
    .selectFrom("images as c")
    .innerJoin("images as o", (join) => join.onRef("o.id", "=", "c.dup_of").onRef("o.project_id", "=", "c.project_id"))
    .select((eb) => ["o.id", "o.title", "o.thumb_key", "o.created_at", eb.fn.max("c.id").as("newest"), eb.fn.countAll<number>().as("n")])
    .where("c.project_id", "=", scope.project.id)
    .where("c.dup_of", "is not", null)
    .groupBy(["o.id", "o.title", "o.thumb_key", "o.created_at"])
    .$if(Boolean(opts.after), (s) => s.having((eb) => eb(eb.fn.max("c.id"), "<", opts.after!)))
    .orderBy("newest", "desc")
    .limit(limit + 1)
    .execute();
  const page: DuplicateGroup[] = [];
  for (const g of groups.slice(0, limit)) {
    const copies = await db()
      .selectFrom("images")
      .select(["id", "title", "thumb_key", "created_at"])
      .where("dup_of", "=", g.id)
      .where("project_id", "=", scope.project.id)
      .orderBy("id", "desc")
      .limit(COPIES_SHOWN)
      .execute();
    page.push({ first: shownImage(g), copies: copies.map(shownImage), count: Number(g.n) });
  }
  return { groups: page, next: groups.length > limit ? Number(groups[limit - 1]!.newest) : null };
}

/**
 * After images were deleted, inside the write that deleted them (which holds the project's lock, as uploads take it):
 * a deleted image that was the first of a group leaves its copies grouped, under the oldest of them (now the group's
 * first: it came in first of those left). Without it the copies would each have pointed at nothing, and left Possible
 * duplicates though still alike. Three statements per thousand deleted images, whatever the groups.
 */
export async function regroupCopiesOf(trx: Trx, projectId: number, deletedIds: readonly number[]) {
  for (const ids of chunksOf([...deletedIds], 1000)) {
    const heads = (
      await trx
        .selectFrom("images")
        .select((eb) => eb.fn.min<number>("id").as("head"))
        .where("project_id", "=", projectId)
        .where("dup_of", "in", ids)
        .groupBy("dup_of")
        .execute()
    ).map((r) => Number(r.head));
    if (!heads.length) continue;
    // The others first, while each head still names the deleted image (so the oldest is still found among them).
    await trx
      .updateTable("images")
      .set({ dup_of: sql<number>`(select min(x.id) from images x where x.project_id = images.project_id and x.dup_of = images.dup_of)` })
      .where("project_id", "=", projectId)
      .where("dup_of", "in", ids)
      .where("id", "not in", heads)
      .execute();
    await trx.updateTable("images").set({ dup_of: null }).where("id", "in", heads).execute();
  }
}

/** The same for an image already read (its `dup_of`): one primary-key look-up, none when it has no look-alike. */
export async function lookAlikeOf(image: { project_id: number; dup_of: number | null }) {
  if (image.dup_of === null) return null;
  return (
    (await db()
      .selectFrom("images")
      .select(["id", "title"])
      .where("id", "=", image.dup_of)
      .where("project_id", "=", image.project_id)
      .executeTakeFirst()) ?? null
  );
}

/** The image an image looked like when it came in, if nobody has decided yet and it is still in the project. */
export async function lookedLike(scope: ProjectScope, imageId: number) {
  const row = await db()
    .selectFrom("images as c")
    .innerJoin("images as o", (join) => join.onRef("o.id", "=", "c.dup_of").onRef("o.project_id", "=", "c.project_id"))
    .select(["o.id", "o.title", "o.thumb_key"])
    .where("c.id", "=", imageId)
    .where("c.project_id", "=", scope.project.id)
    .executeTakeFirst();
  return row ? { id: row.id, title: row.title, thumbKey: row.thumb_key } : null;
}

/**
 * "Keep both": the images are not duplicates for this project's people; the pair leaves Possible duplicates. False
 * when the image is not the project's, or has no look-alike (any more).
 */
export async function keepBoth(scope: ProjectScope, imageId: number): Promise<boolean> {
  requireEdit(scope);
  return write(async (trx, touched) => {
    const changed = await trx
      .updateTable("images")
      .set({ dup_of: null })
      .where("id", "=", imageId)
      .where("project_id", "=", scope.project.id)
      .where("dup_of", "is not", null)
      .executeTakeFirst();
    if (!Number(changed.numUpdatedRows)) return false;
    touched.project(scope.project.id);
    return true;
  });
}
