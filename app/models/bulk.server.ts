import { sql } from "kysely";
import { PURGE_MANY_JOB } from "~/lib/job-types";
import { db, dialect } from "~/db/connection.server";
import type { Image } from "~/db/schema";
import { chunksOf } from "~/lib/chunks";
import { InvalidError, NotFoundError } from "~/lib/errors";
import { idRanges } from "~/lib/ids";
import { recordedAs } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { boardOfProject, refreshCover } from "./boards.server";
import { regroupCopiesOf } from "./duplicates.server";
import { lockProjectForImages } from "./images.server";
import { idsInScope, pickedImages, selectedImageIds, type ImagesQuery, type Picked } from "./grid.server";
import type { PurgePayload } from "./image-edits.server";
import { enqueueJob } from "./jobs.server";
import { requireEdit, type BoardScope, type GridScope, type MemberScope, type ProjectScope } from "./scope.server";
import { write, type Touched, type Trx } from "./write.server";

/**
 * Bulk actions on a grid's selection (the whole filtered set minus exceptions, or picked ids). Every action is
 * set-based SQL over `selectedImageIds` (INSERT … SELECT, UPDATE / DELETE … WHERE id IN (…)), never a loop of
 * single rows, so select all on a 100,000-image project costs a few statements. A chunk (`range`) limits an
 * action to an id range, for the background job that runs large selections with progress.
 */
export type { Picked };

/** Where in id order a chunk of a large selection starts (exclusive) and ends (inclusive). */
export interface IdRange {
  after: number;
  upTo: number;
}

export function inRange(q: ImagesQuery<{ id: number }>, range?: IdRange) {
  return range ? q.where("images.id", ">", range.after).where("images.id", "<=", range.upTo) : q;
}

/**
 * How many images a selection holds, after checking it: every picked id must be an image of the scope now, so a
 * foreign, unknown or departed id fails the whole request (404) and nothing changes.
 */
export async function countSelection(scope: GridScope, picked: Picked): Promise<number> {
  if (!picked.all) {
    const wanted = new Set(picked.ids);
    const found = await idsInScope(scope, [...wanted]);
    if (found.length !== wanted.size) throw new NotFoundError("Image not found");
    return found.length;
  }
  return countOf(db(), selectedImageIds(scope, picked));
}

/** How many ids a selection subquery holds, read through `executor` (a transaction, or the pool). */
async function countOf(executor: Trx | ReturnType<typeof db>, ids: ImagesQuery<{ id: number }>): Promise<number> {
  const row = await executor
    .selectFrom(ids.as("s"))
    .select(sql<number>`count(*)`.as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The selection cut into id ranges of `size` images, in id order (for a job's progress). */
export async function selectionRanges(scope: GridScope, picked: Picked, size: number): Promise<IdRange[]> {
  const ranges: IdRange[] = [];
  let after = 0;
  for (;;) {
    const edge = await db()
      .selectFrom(selectedImageIds(scope, picked).as("s"))
      .select("s.id")
      .where("s.id", ">", after)
      .orderBy("s.id")
      .limit(1)
      .offset(size - 1)
      .executeTakeFirst();
    if (!edge) {
      const last = await db()
        .selectFrom(selectedImageIds(scope, picked).as("s"))
        .select(sql<number>`max(s.id)`.as("id"))
        .where("s.id", ">", after)
        .executeTakeFirst();
      if (last?.id != null) ranges.push({ after, upTo: Number(last.id) });
      return ranges;
    }
    ranges.push({ after, upTo: Number(edge.id) });
    after = Number(edge.id);
  }
}

export interface BulkOutcome {
  /** Images the action changed. */
  affected: number;
  /** Images it left as they were (already on the target, already holding every keyword, …). */
  skipped: number;
}

const changed = (result: { numInsertedOrUpdatedRows?: bigint; numUpdatedRows?: bigint; numDeletedRows?: bigint }) =>
  Number(result.numInsertedOrUpdatedRows ?? result.numUpdatedRows ?? result.numDeletedRows ?? 0);

async function pinAll(trx: Trx, touched: Touched, scope: MemberScope, ids: ImagesQuery<{ id: number }>, target: string, at: number) {
  const inserted = await trx
    .insertInto("board_images")
    .columns(["board_id", "image_id", "added_by", "added_at"])
    .expression(
      trx
        .selectFrom(ids.as("s"))
        .select((eb) => [
          eb.val(target).as("board_id"),
          "s.id",
          sql.lit(recordedAs(scope.actor)).as("added_by"),
          sql.lit(at).as("added_at"),
        ])
        // SQLite reads "SELECT … ON CONFLICT" ambiguously unless the SELECT has a WHERE clause.
        .where(sql<boolean>`true`),
    )
    .onConflict((oc) => oc.columns(["board_id", "image_id"]).doNothing())
    .executeTakeFirst();
  touched.board(target);
  return changed(inserted);
}

/**
 * Add (project view) or Copy (board view) to another board of the project: images already on it are skipped and
 * counted. A board without a cover gets one.
 */
export async function copyToBoard(scope: MemberScope, picked: Picked, targetId: string, range?: IdRange): Promise<BulkOutcome> {
  requireEdit(scope);
  const target = await boardOfProject(scope, targetId);
  const at = Date.now();
  return write(async (trx, touched) => {
    const ids = inRange(selectedImageIds(scope, picked), range);
    const total = await countOf(trx, ids);
    const added = await pinAll(trx, touched, scope, ids, target.id, at);
    await refreshCover(trx, target.id);
    return { affected: added, skipped: total - added };
  }, at);
}

/**
 * Move (board view): off this board, onto another of the project, in one transaction. On PostgreSQL the images
 * taken off are exactly the ones this statement deleted (a data-modifying CTE), so two moves of the same images
 * at once leave each image on exactly one board; SQLite's single writer gives the same. Images already on the
 * target leave the source and are counted as skipped.
 */
export async function moveToBoard(scope: BoardScope, picked: Picked, targetId: string, range?: IdRange): Promise<BulkOutcome> {
  requireEdit(scope);
  const target = await boardOfProject(scope, targetId);
  if (target.id === scope.board.id) throw new InvalidError("Choose another board to move the images to.");
  const at = Date.now();
  const by = recordedAs(scope.actor);
  return write(async (trx, touched) => {
    const ids = inRange(selectedImageIds(scope, picked), range);
    let moved: number;
    let added: number;
    if (dialect() === "postgres") {
      const result = await sql<{ moved: number; added: number }>`
        with gone as (
          delete from board_images where board_id = ${scope.board.id} and image_id in (${ids}) returning image_id
        ), put as (
          insert into board_images (board_id, image_id, added_by, added_at)
          select ${target.id}, image_id, ${sql.lit(by)}, ${sql.lit(at)} from gone
          on conflict (board_id, image_id) do nothing returning image_id
        )
        select (select count(*) from gone)::int as moved, (select count(*) from put)::int as added`.execute(trx);
      moved = Number(result.rows[0]!.moved);
      added = Number(result.rows[0]!.added);
    } else {
      // SQLite has one writer at a time: copy, then take the same images (the selection still reads them from the
      // source board) off it.
      added = await pinAll(trx, touched, scope, ids, target.id, at);
      const removed = await trx
        .deleteFrom("board_images")
        .where("board_id", "=", scope.board.id)
        .where("image_id", "in", ids)
        .executeTakeFirst();
      moved = changed(removed);
    }
    touched.board(scope.board.id).board(target.id);
    await refreshCover(trx, scope.board.id);
    await refreshCover(trx, target.id);
    return { affected: moved, skipped: moved - added };
  }, at);
}

/** Remove (board view): off this board; the images stay in the project. */
export async function removeFromBoardBulk(scope: BoardScope, picked: Picked, range?: IdRange): Promise<BulkOutcome> {
  requireEdit(scope);
  return write(async (trx, touched) => {
    const ids = inRange(selectedImageIds(scope, picked), range);
    const removed = await trx
      .deleteFrom("board_images")
      .where("board_id", "=", scope.board.id)
      .where("image_id", "in", ids)
      .executeTakeFirst();
    touched.board(scope.board.id);
    await refreshCover(trx, scope.board.id);
    return { affected: changed(removed), skipped: 0 };
  });
}

/**
 * Delete (project view): the rows go in one transaction (versions, pins and attribute values cascade) that also
 * queues the removal of their objects, as for one image; the purge removes only objects nothing else uses.
 */
export async function deleteImagesBulk(scope: ProjectScope, picked: Picked, range?: IdRange): Promise<BulkOutcome> {
  requireEdit(scope);
  return write(async (trx, touched) => {
    // The project's lock, as uploads take it: one joining a group of possible duplicates, or a delete regrouping one,
    // waits for this one and sees it done (regroupCopiesOf below).
    await lockProjectForImages(trx, scope.project.id);
    const ids = inRange(selectedImageIds(scope, picked), range);
    const images = await trx
      .selectFrom("images")
      .select(["id", "checksum", "storage_key", "thumb_key", "preview_key"])
      .where("id", "in", ids)
      .execute();
    if (!images.length) return { affected: 0, skipped: 0 };
    const versions = await trx
      .selectFrom("image_versions")
      .select(["image_id", "storage_key", "thumb_key", "preview_key"])
      .where("image_id", "in", ids)
      .execute();
    const byChecksum = new Map<string, Set<string>>();
    const checksumOf = new Map(images.map((i) => [i.id, i.checksum]));
    for (const r of [...images.map((i) => ({ ...i, image_id: i.id })), ...versions]) {
      const checksum = checksumOf.get(r.image_id)!;
      const keys = byChecksum.get(checksum) ?? new Set<string>();
      for (const k of [r.storage_key, r.thumb_key, r.preview_key]) keys.add(k);
      byChecksum.set(checksum, keys);
    }
    touched.project(scope.project.id);
    await touched.boardsHoldingAny(ids);
    const deleted = await trx.deleteFrom("images").where("id", "in", ids).executeTakeFirst();
    await regroupCopiesOf(
      trx,
      scope.project.id,
      images.map((i) => i.id),
    );
    const items: PurgePayload[] = [...byChecksum].map(([checksum, keys]) => ({ checksum, keys: [...keys] }));
    for (let i = 0; i < items.length; i += 200)
      await enqueueJob(PURGE_MANY_JOB, { items: items.slice(i, i + 200) }, { maxAttempts: 20 }, trx);
    for (const board of touched.boards) await refreshCover(trx, board);
    // One entry for the transaction (a job's chunk of 2,000 at most), committed with it: the count and the ids as
    // ranges ("1-5000,5002"), never an entry per image.
    await recordAudit(
      {
        action: "images.deleted",
        ...byActor(scope.actor),
        subject: `project:${scope.project.id}`,
        detail: { count: images.length, ids: idRanges(images.map((i) => i.id)) },
      },
      trx,
    );
    return { affected: changed(deleted), skipped: 0 };
  });
}

/** Keywords a bulk add may leave an image with, at most (the edit form's limit). */
export const MAX_KEYWORDS = 30;
/** The columns of an image that its version rows copy, in the same order on both sides of the copy. */
const VERSIONED = [
  "version",
  "title",
  "description",
  "keywords",
  "ocr_text",
  "rotation",
  "storage_key",
  "thumb_key",
  "preview_key",
] as const;

/**
 * Add keyword: each keyword goes onto every selected image that does not hold it yet (compared case-insensitively)
 * and has room for it; each changed image gets one new version ("keywords"), as an edit would.
 */
export async function addKeywordsBulk(
  scope: GridScope & MemberScope,
  picked: Picked,
  keywords: string[],
  range?: IdRange,
): Promise<BulkOutcome> {
  requireEdit(scope);
  const at = Date.now();
  return write(async (trx, touched) => {
    const ids = inRange(selectedImageIds(scope, picked), range);
    const total = await countOf(trx, ids);
    // The images this action changed, as each keyword's update returns them: at most a range of the bulk job (or the
    // selection run inline, BULK_INLINE_MAX). They used to be found again by a marker timestamp, which PostgreSQL
    // estimated from statistics taken before the update at one row: it then planned the selection's matches once per
    // image (a search's 5,000 images ran past the 30 s statement timeout; tests/integration/pg-plans.test.ts).
    const changedIds = new Set<number>();
    for (const keyword of keywords) {
      const append =
        dialect() === "postgres"
          ? sql<string>`(keywords::jsonb || to_jsonb(${keyword}::text))::text`
          : sql<string>`json_insert(keywords, '$[#]', ${keyword})`;
      const holds =
        dialect() === "postgres"
          ? sql<boolean>`exists (select 1 from jsonb_array_elements_text(images.keywords::jsonb) k where lower(k) = lower(${keyword}))`
          : sql<boolean>`exists (select 1 from json_each(images.keywords) k where lower(k.value) = lower(${keyword}))`;
      const size = dialect() === "postgres" ? sql<number>`jsonb_array_length(keywords::jsonb)` : sql<number>`json_array_length(keywords)`;
      const rows = await trx
        .updateTable("images")
        .set({ keywords: append, updated_at: at })
        .where("id", "in", ids)
        .where(sql<boolean>`not ${holds}`)
        .where(size, "<", MAX_KEYWORDS)
        .returning("id")
        .execute();
      for (const r of rows) changedIds.add(r.id);
    }
    // One new version each, however many of the keywords it took.
    for (const chunk of chunksOf([...changedIds], 500)) {
      await trx
        .updateTable("images")
        .set((eb) => ({ version: eb("version", "+", 1) }))
        .where("id", "in", chunk)
        .execute();
      await trx
        .insertInto("image_versions")
        .columns(["image_id", ...VERSIONED, "changes", "changed_by", "changed_at"])
        .expression(
          trx
            .selectFrom("images")
            .select([
              "id",
              ...VERSIONED,
              sql.lit(JSON.stringify(["keywords"])).as("changes"),
              sql.lit(recordedAs(scope.actor)).as("changed_by"),
              sql.lit(at).as("changed_at"),
            ])
            .where("id", "in", chunk),
        )
        .execute();
    }
    const affected = changedIds.size;
    if (affected) {
      touched.project(scope.project.id);
      await touched.boardsHolding([...changedIds]);
    }
    return { affected, skipped: total - affected };
  }, at);
}

const SELECTION_COLUMNS = [
  "id",
  "title",
  "description",
  "keywords",
  "ocr_text",
  "original_name",
  "mime_type",
  "storage_key",
  "size_bytes",
  "created_at",
  "taken_at",
  "camera_make",
  "camera_model",
  "gps_lat",
  "gps_lon",
] as const;

type SelectionColumn = (typeof SELECTION_COLUMNS)[number];

/**
 * The rows a download or data export reads: at most `limit`, in grid-independent id order, after `afterId`; every
 * column a download writes, or only `columns` (an export of titles and keywords need not read each description and
 * OCR text: a third of its time, bench P9b).
 */
export async function selectionRows<C extends SelectionColumn = SelectionColumn>(
  scope: GridScope,
  picked: Picked,
  opts: { afterId?: number; limit: number; columns?: readonly C[] },
): Promise<Pick<Image, C>[]> {
  return (await selectionPage(scope, picked, opts).execute()) as unknown as Pick<Image, C>[];
}

/** selectionRows' statement (its plan is tested). */
export function selectionPage(
  scope: GridScope,
  picked: Picked,
  opts: { afterId?: number; limit: number; columns?: readonly SelectionColumn[] },
) {
  // The selection's own query walked by id (not `id IN (selection)`, which rebuilds the whole set for every page).
  // In one project the walk goes by (project, id), the order of images_project_id: asked by id alone, PostgreSQL took
  // the primary key and threw away every image of the projects made before this one (150,000 of them for each page
  // in tests/integration/pg-plans.test.ts), the project's constant hiding from it which index the order came from.
  // The row comparison keeps it off the primary key; `id > after` beside it is what both databases seek the index
  // to: with the row comparison alone, each started at the project's first image and stepped to the cursor (a page
  // 90,000 in: 7 ms on SQLite, 3 ms on PostgreSQL, instead of 0.8; an export of 1M images grew with its square).
  const after = opts.afterId ?? 0;
  return pickedImages(scope, picked)
    .clearSelect()
    .select((opts.columns ?? SELECTION_COLUMNS).map((c) => sql.ref<string>(`images.${c}`).as(c)))
    .where(
      scope.kind === "all"
        ? sql<boolean>`${sql.ref("images.id")} > ${after}`
        : sql<boolean>`(${sql.ref("images.project_id")}, ${sql.ref("images.id")}) > (${scope.project.id}, ${after}) and ${sql.ref("images.id")} > ${after}`,
    )
    .clearOrderBy()
    .orderBy(sql.ref("images.project_id"))
    .orderBy(sql.ref("images.id"))
    .limit(opts.limit);
}

/**
 * Attribute values of some images (of one scope), for downloads and exports: read by the images' primary key only
 * (joining the attributes to filter by project made SQLite walk every value of each attribute: 22 ms a page of 1,000
 * instead of 3, bench P9b). The callers keep the values of the project's own attribute columns.
 */
export async function attributeValuesOf(imageIds: number[]) {
  if (!imageIds.length) return [];
  return (
    db()
      .selectFrom("image_attribute_values")
      .select(["image_id", "attribute_id", "value"])
      // PostgreSQL takes the page's ids as one array: a statement of 1,000 parameters was parsed and planned anew for
      // each page (bench P9b-pg).
      .where(
        dialect() === "postgres" ? sql<boolean>`image_id = any(${imageIds}::int[])` : sql<boolean>`image_id in (${sql.join(imageIds)})`,
      )
      .execute()
  );
}

/** The same, by image and then by attribute id: what a CSV row of an image reads its attribute columns from. */
export async function attributeValuesByImage(imageIds: number[]): Promise<Map<number, Map<number, string>>> {
  const byImage = new Map<number, Map<number, string>>();
  for (const v of await attributeValuesOf(imageIds)) {
    let own = byImage.get(v.image_id);
    if (!own) byImage.set(v.image_id, (own = new Map()));
    own.set(v.attribute_id, v.value);
  }
  return byImage;
}

/** The project's attributes, in a stable order: the columns of an export. */
export async function attributeColumns(projectId: number) {
  return db().selectFrom("attributes").select(["id", "name"]).where("project_id", "=", projectId).orderBy("name").orderBy("id").execute();
}
