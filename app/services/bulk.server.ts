import { BULK_JOB } from "~/lib/job-types";
import { Readable } from "node:stream";
import { stringify } from "csv-stringify";
import { ZipFile } from "yazl";
import { InvalidError, NotFoundError } from "~/lib/errors";
import { cameraName, takenIso } from "~/lib/capture";
import { safeFileName } from "~/lib/file-names";
import { DOWNLOAD_LIMIT_MESSAGE, MAX_DOWNLOAD } from "~/lib/schemas";
import { actorOf } from "~/models/actor";
import {
  addKeywordsBulk,
  attributeColumns,
  attributeValuesByImage,
  copyToBoard,
  countSelection,
  deleteImagesBulk,
  moveToBoard,
  removeFromBoardBulk,
  selectionRanges,
  selectionRows,
  type BulkOutcome,
  type IdRange,
  type Picked,
} from "~/models/bulk.server";
import { assignableAttribute, assignAttributeBulk } from "~/models/attributes.server";
import { boardOfProject } from "~/models/boards.server";
import { setJobProgress } from "~/models/jobs.server";
import { boardScope, projectScope, withFilter, type MemberScope, type OneProjectScope } from "~/models/scope.server";
import { filterSearch, withFilterQuery } from "~/lib/grid-filter";
import { findUserById } from "~/models/users.server";
import { tokenGrant } from "~/models/api-tokens.server";
import { defineJob, JobCannotSucceed, queue } from "./jobs.server";
import { storage } from "./storage.server";
import { nativeZipCrc } from "./zip-crc.server";

/** Selections up to this size are changed at once; larger ones by a background job, in chunks, with progress. */
export const BULK_INLINE_MAX = 5_000;
const CHUNK = 2_000;

export type BulkAction =
  | { op: "add" | "copy" | "move"; target: string }
  | { op: "remove" }
  | { op: "delete" }
  | { op: "keywords"; keywords: string[] }
  | { op: "attributes"; attributeId: number; value: string; replace: boolean };

function apply(scope: MemberScope, picked: Picked, action: BulkAction, range?: IdRange): Promise<BulkOutcome> {
  switch (action.op) {
    case "add":
    case "copy":
      return copyToBoard(scope, picked, action.target, range);
    case "move":
      if (scope.kind !== "board") throw new InvalidError("Move works from a board.");
      return moveToBoard(scope, picked, action.target, range);
    case "remove":
      if (scope.kind !== "board") throw new InvalidError("Remove works on a board.");
      return removeFromBoardBulk(scope, picked, range);
    case "delete":
      if (scope.kind !== "project") throw new InvalidError("Delete works in a project.");
      return deleteImagesBulk(scope, picked, range);
    case "keywords":
      return addKeywordsBulk(scope, picked, action.keywords, range);
    case "attributes":
      return assignAttributeBulk(scope, picked, action, range);
  }
}

/**
 * What the action names, checked before anything runs or is queued (a job would find it only later, and fail): a
 * board of the project (404), an attribute values can be assigned to (400).
 */
async function checkTarget(scope: MemberScope, action: BulkAction) {
  if (action.op === "add" || action.op === "copy" || action.op === "move") await boardOfProject(scope, action.target);
  if (action.op === "attributes") await assignableAttribute(scope, action.attributeId);
}

/**
 * Runs a bulk action on a checked selection: at once when it is small, else as a job (chunks of id ranges, each its
 * own transaction, progress recorded). Returns the outcome, or the job to follow.
 */
export async function runBulk(
  scope: MemberScope,
  picked: Picked,
  action: BulkAction,
): Promise<{ outcome: BulkOutcome; count: number } | { jobId: number; count: number }> {
  await checkTarget(scope, action);
  const count = await countSelection(scope, picked);
  if (!count) throw new InvalidError("No images are selected.");
  if (count <= BULK_INLINE_MAX) return { outcome: await apply(scope, picked, action), count };
  const grid = scope.kind === "board" ? `/${scope.project.id}/board/${scope.board.id}` : `/client/${scope.project.id}`;
  const back = withFilterQuery(grid, scope.filter);
  const jobId = await queue(BULK_JOB, { ...selectionJobRef(scope), picked, action, back } satisfies BulkJob, {
    ownerUserId: scope.actor.id,
    apiTokenId: scope.actor.grant?.tokenId ?? null,
    total: count,
    maxAttempts: 3,
  });
  return { jobId, count };
}

interface BulkJob extends SelectionJobRef {
  picked: Picked;
  action: BulkAction;
  /** The grid to go back to once done. */
  back: string;
}

/** What a background job of a grid's selection needs to find its scope again. */
export interface SelectionJobRef {
  userId: number;
  /** The address the job was asked from: what its audit entries record. */
  ip?: string | null;
  scope: { kind: "project" | "board"; id: number | string };
  /** The grid's filter (search, attribute values, review) as a query string: the selection is of the filtered set. */
  filter: string;
  /** Started through the API: the token whose grant narrows the job, as it is when the job runs. */
  tokenId?: number;
}

export const selectionJobRef = (scope: MemberScope): SelectionJobRef => ({
  userId: scope.actor.id,
  ip: scope.actor.ip ?? null,
  scope: scope.kind === "board" ? { kind: "board", id: scope.board.id } : { kind: "project", id: scope.project.id },
  filter: filterSearch(scope.filter),
  ...(scope.actor.grant ? { tokenId: scope.actor.grant.tokenId } : {}),
});

/** A job re-resolves the scope with the person's rights as they are now (gone or demoted: nothing happens). */
export async function resumeScope(ref: SelectionJobRef) {
  const user = await findUserById(ref.userId);
  if (!user || user.status !== "active") throw new NotFoundError("The person who started this is no longer active.");
  const grant = await grantOf(ref);
  const actor = { ...actorOf(user, ref.ip ?? null), ...(grant ? { grant } : {}) };
  const scope = withFilter(
    ref.scope.kind === "board" ? await boardScope(actor, String(ref.scope.id)) : await projectScope(actor, ref.scope.id),
    new URLSearchParams(ref.filter ?? ""),
  );
  return { scope, user };
}

const TOKEN_GONE = "The access token that started this was revoked or has expired.";

/**
 * The grant of the token a job was started with, as it is now (none: started on the pages); a token gone fails the
 * job for good at once (a revoked or expired token never comes back).
 */
async function grantOf(ref: SelectionJobRef) {
  if (ref.tokenId === undefined) return undefined;
  const grant = await tokenGrant(ref.tokenId, ref.userId);
  if (!grant) throw new JobCannotSucceed(TOKEN_GONE);
  return grant;
}

/** A job on a whole project (an import, a re-import): the project's scope for the person who started it, as it is now. */
export async function resumeProjectScope(userId: number, projectId: number, ip: string | null = null) {
  const { user, scope } = await resumeScope({ userId, ip, scope: { kind: "project", id: projectId }, filter: "" });
  if (scope.kind !== "project") throw new Error("A project job works on a project");
  return { user, scope };
}

/** The job re-resolves the scope, then works through the selection. */
/** A large selection's bulk action (BULK_JOB): in id ranges of 2,000, with progress. */
export const bulkJob = defineJob(async (payload: BulkJob, job) => {
  const { scope } = await resumeScope(payload);
  const ranges = await selectionRanges(scope, payload.picked, CHUNK);
  const total = ranges.length ? (job.total ?? ranges.length * CHUNK) : 0;
  const sum: BulkOutcome = { affected: 0, skipped: 0 };
  let done = 0;
  for (const range of ranges) {
    // A token revoked or expired mid-way stops the job before its next chunk.
    await grantOf(payload);
    const outcome = await apply(scope, payload.picked, payload.action, range);
    sum.affected += outcome.affected;
    sum.skipped += outcome.skipped;
    done = Math.min(total, done + CHUNK);
    await setJobProgress(job.id, done, total);
  }
  await setJobProgress(job.id, total, total);
  return { ...sum, action: payload.action.op, back: payload.back };
});

/**
 * The selection as one ZIP, streamed as it is written: entries stored (JPEG, PNG and WebP do not shrink), ZIP64
 * when needed (yazl), one source open at a time, the size known up front (Content-Length), and `images.csv` with
 * each file's metadata and attributes. A source that fails mid-way errors the stream: the download ends visibly
 * short of its announced length instead of quietly missing a file.
 */
export async function zipOfSelection(
  scope: OneProjectScope,
  picked: Picked,
  /** Titles as file names and images.csv; a share link that shows images only gets neither. */
  opts: { metadata: boolean } = { metadata: true },
): Promise<{ stream: ReadableStream<Uint8Array>; size: number; count: number }> {
  const count = await countSelection(scope, picked);
  if (!count) throw new InvalidError("No images are selected.");
  if (count > MAX_DOWNLOAD) throw new InvalidError(DOWNLOAD_LIMIT_MESSAGE);
  const rows = await selectionRows(scope, picked, { limit: MAX_DOWNLOAD });
  const taken = new Set<string>(["images.csv"]);
  const files = rows.map((r) => ({ ...r, name: safeFileName(opts.metadata ? r.title : "", `image-${r.id}`, r.mime_type, taken) }));
  const csv = opts.metadata ? await metadataCsv(scope, files, (f) => f.name) : null;

  nativeZipCrc();
  const zip = new ZipFile();
  const mtime = new Date();
  // The source being read: a download cancelled half-way (the client went away) closes it instead of leaving it open.
  let reading: Readable | null = null;
  for (const file of files)
    zip.addReadStreamLazy(file.name, { size: Number(file.size_bytes), compress: false, mtime }, (done) => {
      storage()
        .get(file.storage_key)
        .then((found) => {
          if (!found) return done(new Error(`Stored file missing for image ${file.id}`), undefined as never);
          reading = found.stream;
          done(null, found.stream);
        })
        .catch((err: Error) => done(err, undefined as never));
    });
  if (csv) zip.addBuffer(csv, "images.csv", { compress: false, mtime });
  let size = -1;
  // yazl calls back with the final size before any byte is written (every entry's size is known, nothing deflated).
  (zip.end as (options: object, done: (total: number) => void) => void)({}, (total) => (size = total));
  const out = zip.outputStream as Readable;
  zip.on("error", (err: Error) => out.destroy(err));
  out.on("close", () => (reading as Readable | null)?.destroy());
  return { stream: Readable.toWeb(out) as unknown as ReadableStream<Uint8Array>, size, count };
}

type Row = Awaited<ReturnType<typeof selectionRows>>[number];

/** A CSV of images' metadata and attribute values: formula cells escaped, UTF-8 with a BOM for spreadsheet programs. */
async function metadataCsv<T extends Row>(scope: OneProjectScope, rows: T[], fileOf?: (row: T) => string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const writer = await metadataWriter(scope, Boolean(fileOf));
  writer.csv.on("data", (c: Buffer) => chunks.push(c));
  const finished = new Promise((resolve, reject) => writer.csv.on("end", resolve).on("error", reject));
  await writer.write(rows, fileOf);
  writer.csv.end();
  await finished;
  return Buffer.concat(chunks);
}

/**
 * A CSV writer as spreadsheets want it: UTF-8 with a BOM (read as UTF-8), a header row, and cells a spreadsheet
 * would run as a formula escaped. Every CSV Koala writes starts here.
 */
export const spreadsheetCsv = (columns: string[]) => stringify({ bom: true, header: true, columns, escape_formulas: true });

/**
 * The images-data CSV of a scope (`withFile`: the ZIP's, naming each image's file) and what writes its rows: the
 * metadata, the capture data (as the panel shows it: the camera's wall clock, the camera's name) for members, the
 * position where the project keeps positions, then the project's attributes. A share link's visitors, who see no
 * capture data on the page, get none here either.
 */
async function metadataWriter(scope: OneProjectScope, withFile: boolean) {
  const attributes = await attributeColumns(scope.project.id);
  const capture = scope.kind !== "shared";
  const positions = capture && scope.project.keepGps;
  const csv = spreadsheetCsv([
    "Image ID",
    ...(withFile ? ["File"] : []),
    "Title",
    "Description",
    "Keywords",
    "OCR text",
    "Original file name",
    "Created",
    ...(capture ? ["Taken", "Camera"] : []),
    ...(positions ? ["Latitude", "Longitude"] : []),
    ...attributes.map((a) => a.name),
  ]);
  async function write<T extends Row>(rows: T[], fileOf?: (row: T) => string) {
    const byImage = await attributeValuesByImage(rows.map((r) => r.id));
    for (const r of rows) {
      const values = byImage.get(r.id);
      const ok = csv.write([
        r.id,
        ...(fileOf ? [fileOf(r)] : []),
        r.title,
        r.description,
        (JSON.parse(r.keywords) as string[]).join(", "),
        r.ocr_text,
        r.original_name,
        new Date(Number(r.created_at)).toISOString(),
        ...(capture ? [takenIso(Number(r.taken_at)) ?? "", cameraName(r.camera_make, r.camera_model)] : []),
        ...(positions ? [r.gps_lat ?? "", r.gps_lon ?? ""] : []),
        ...attributes.map((a) => values?.get(a.id) ?? ""),
      ]);
      if (!ok) await new Promise((resolve) => csv.once("drain", resolve));
    }
  }
  return { csv, write };
}

/** "Download images data": the selection's metadata and attribute values as CSV, streamed 1,000 rows at a time. */
export async function csvOfSelection(scope: MemberScope, picked: Picked): Promise<{ stream: ReadableStream<Uint8Array>; count: number }> {
  const count = await countSelection(scope, picked);
  if (!count) throw new InvalidError("No images are selected.");
  const { csv, write } = await metadataWriter(scope, false);
  void (async () => {
    try {
      let afterId = 0;
      for (;;) {
        const rows = await selectionRows(scope, picked, { afterId, limit: 1000 });
        if (!rows.length) break;
        await write(rows);
        afterId = rows[rows.length - 1]!.id;
      }
      csv.end();
    } catch (err) {
      csv.destroy(err as Error);
    }
  })();
  return { stream: Readable.toWeb(csv) as unknown as ReadableStream<Uint8Array>, count };
}
