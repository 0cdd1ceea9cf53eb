import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { parse, type Info } from "csv-parse";
import { attributeValueProblem, CSV_MESSAGES, csvRefusalTitle } from "~/lib/attribute-rules";
import { getErrorMessage } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { hasUnreadable, type TextEncodingName, UNREADABLE_MESSAGE } from "~/lib/text-encoding";
import { fileEncoding, utf8Stream } from "~/lib/text-file.server";
import { importValues, type ValueBatch } from "~/models/attribute-import.server";
import { idsInScope } from "~/models/grid.server";
import { attributesOf } from "~/models/attributes.server";
import { byActor, recordAudit } from "~/models/audit.server";
import { saveJobCheckpoint, setJobProgress } from "~/models/jobs.server";
import type { Job } from "~/db/schema";
import { write, type Trx } from "~/models/write.server";
import type { ProjectScope } from "~/models/scope.server";
import { IMPORT_JOB } from "~/lib/job-types";
import { resumeProjectScope } from "./bulk.server";
import { defineJob, LeaseLost, queue } from "./jobs.server";
import { deliver } from "./mail.server";
import { objectKey, storage } from "./storage.server";
import { tempPath } from "./temp-files.server";

/** Errors a report lists, at most (the count says how many there were). */
export const ERROR_CAP = 100;
/** Rows whose image ids are checked in one query. */
const BATCH = 1000;
/**
 * Files up to `inlineMaxBytes` are checked and applied while the page waits; larger ones by a background job, tried
 * `jobAttempts` times (each attempt resumes after the last batch an earlier one committed). `writeBatch`: values
 * written per transaction, one multi-row upsert (sent as one JSON parameter, models/attribute-import.server.ts).
 * Fewer, larger transactions: bench P9 measured 1,000 per transaction at 0.47× of 4,000.
 */
export const importSettings = { inlineMaxBytes: 512 * 1024, jobAttempts: 3, writeBatch: 4000 };

export interface ImportReport {
  /**
   * success: applied; errors: nothing changed, see `errors`; no-image-id and unparseable are the spec's whole-file
   * refusals; unreadable: characters that could not be read (the spec's 'File Read Error'), listed by line.
   */
  outcome: "success" | "errors" | "no-image-id" | "unparseable" | "unreadable";
  /** Data rows read. */
  rows: number;
  /** Non-empty cells of user-attribute columns: the values set (the last of an image's values in the file wins). */
  values: number;
  errors: { line: number; message: string }[];
  errorCount: number;
}

/**
 * A column of the file: the user attribute it sets, or null for a column the export writes and the import leaves
 * alone (Title, Keywords, WSC and system attributes).
 */
type Column = { id: number; name: string } | null;
const KNOWN = new Set(["title", "keywords"]);

type Row = { record: string[]; info: Info };

/**
 * The file's records with their line numbers, streamed (csv-parse) in the file's encoding (lib/text-file.server.ts):
 * BOM dropped, blank lines skipped. The file is closed with the parser, also when the reader stops early (a bad
 * header, a parse error).
 */
function records(file: string, encoding: TextEncodingName): AsyncIterable<Row>;
/** Without `info`: the records alone (the write pass, which names no line: csv-parse's info is an object a record). */
function records(file: string, encoding: TextEncodingName, info: false): AsyncIterable<string[]>;
function records(file: string, encoding: TextEncodingName, info = true): AsyncIterable<Row | string[]> {
  const source = utf8Stream(file, encoding);
  const parser = parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info });
  parser.on("close", () => source.destroy());
  source.on("error", (err) => parser.destroy(err));
  return source.pipe(parser) as AsyncIterable<Row | string[]>;
}

/** A cell as the export wrote it: csv-stringify's `escape_formulas` put a `'` before a leading = + - @ (or tab, CR). */
const unescaped = (cell: string) => (/^'[=+\-@\t\r＝＋－＠]/.test(cell) ? cell.slice(1) : cell);
/** The first header cell: the image ID column. */
const ID_HEADER = /^(image[ _]?id|id)$/i;

/**
 * Reads the header and checks every row without writing: every character readable, ids in the first column, images
 * of the project, values by the one value rule. Streams the file; keeps the errors (up to ERROR_CAP) and counts,
 * never the rows. Answers the file's encoding too, for the write to read it the same way.
 */
export async function checkCsv(
  scope: ProjectScope,
  file: string,
  onChecked?: (bytes: number) => Promise<void>,
): Promise<{ report: ImportReport; columns: Column[]; encoding: TextEncodingName }> {
  const encoding = await fileEncoding(file);
  const report: ImportReport = { outcome: "success", rows: 0, values: 0, errors: [], errorCount: 0 };
  const error = (line: number, message: string) => {
    report.errorCount += 1;
    if (report.errors.length < ERROR_CAP) report.errors.push({ line, message });
  };
  const attributes = await attributesOf(scope);
  // Names are unique in a project (any case); smart names need not be: a header cell is a name first, a smart name
  // only when no attribute is so named, and a smart name two attributes share is refused.
  const byName = new Map(attributes.map((a) => [a.name.toLowerCase(), a]));
  const byCode = new Map<string, (typeof attributes)[number] | "ambiguous">();
  for (const a of attributes) {
    const key = a.code.trim().toLowerCase();
    byCode.set(key, byCode.has(key) ? "ambiguous" : a);
  }
  let columns: Column[] | null = null;
  let pending: { line: number; id: number; cells: string[] }[] = [];
  let bytes = 0;
  const flush = async () => {
    const present = new Set(
      await idsInScope(
        scope,
        pending.map((p) => p.id),
      ),
    );
    for (const p of pending) {
      if (!present.has(p.id)) error(p.line, `Image ID ${p.id} is not an image of this project`);
      if (p.cells.length > columns!.length + 1)
        error(p.line, `${p.cells.length} cells, but the header names ${columns!.length + 1} columns`);
      columns!.forEach((column, i) => {
        const cell = unescaped((p.cells[i + 1] ?? "").trim());
        if (!column || !cell) return;
        const problem = attributeValueProblem(cell);
        if (problem) error(p.line, `${column.name}: ${problem}`);
        else report.values += 1;
      });
    }
    pending = [];
    await onChecked?.(bytes);
  };
  try {
    for await (const { record, info } of records(file, encoding)) {
      const line = info.lines;
      bytes = info.bytes;
      // Never stored with a replacement character: the file is refused, each such line named.
      if (record.some(hasUnreadable)) {
        report.outcome = "unreadable";
        error(line, UNREADABLE_MESSAGE);
        if (!columns) break;
        continue;
      }
      if (!columns) {
        if (!ID_HEADER.test((record[0] ?? "").trim())) {
          report.outcome = "no-image-id";
          error(line, CSV_MESSAGES.noImageId);
          break;
        }
        const seen = new Set<number>();
        columns = record.slice(1).map((raw) => {
          const name = raw.trim();
          const key = name.toLowerCase();
          const attribute = byName.get(key) ?? byCode.get(key);
          if (!attribute && KNOWN.has(key)) return null;
          if (attribute === "ambiguous") error(line, `"${name.slice(0, 64)}" is the smart name of more than one attribute: use the name`);
          else if (!attribute) error(line, `Unknown column "${name.slice(0, 64)}": not an attribute of this project`);
          // WSC and system attributes get their values elsewhere (the export writes them): left alone.
          else if (attribute.type !== 3) return null;
          else if (seen.has(attribute.id)) error(line, `"${attribute.name}" appears twice`);
          else {
            seen.add(attribute.id);
            return { id: attribute.id, name: attribute.name };
          }
          return null;
        });
        if (report.errorCount) break;
        continue;
      }
      report.rows += 1;
      const id = (record[0] ?? "").trim();
      if (!/^\d{1,15}$/.test(id) || !Number.isSafeInteger(Number(id))) {
        if (report.outcome === "unreadable") continue;
        if (report.outcome !== "no-image-id") error(line, CSV_MESSAGES.noImageId);
        report.outcome = "no-image-id";
        continue;
      }
      pending.push({ line, id: Number(id), cells: record });
      if (pending.length >= BATCH) await flush();
    }
    if (columns && pending.length) await flush();
  } catch (err) {
    const line = (err as { lines?: number }).lines;
    report.outcome = "unparseable";
    report.errors = [{ line: line ?? 0, message: `${CSV_MESSAGES.parse}${line ? ` (line ${line})` : ""}` }];
    report.errorCount = 1;
    return { report, columns: [], encoding };
  }
  if (!columns && !report.errorCount) {
    report.outcome = "no-image-id";
    error(1, CSV_MESSAGES.noImageId);
  }
  if (report.outcome === "success" && report.errorCount) report.outcome = "errors";
  if (report.outcome === "success" && !report.rows) {
    report.outcome = "no-image-id";
    error(1, CSV_MESSAGES.noImageId);
  }
  return { report, columns: columns ?? [], encoding };
}

/**
 * The checked file's values, batch by batch, for importValues, each with the data rows read up to its end (a batch
 * ends with a row). The first `skipRows` data rows are passed over: parsed to find where the next row starts, their
 * values never taken.
 */
async function* valueBatches(
  file: string,
  columns: Column[],
  encoding: TextEncodingName,
  skipRows = 0,
): AsyncIterable<{ batch: ValueBatch; rows: number }> {
  let batch: ValueBatch = [];
  let rows = -1; // the header first
  for await (const record of records(file, encoding, false)) {
    rows += 1;
    if (rows <= skipRows) continue;
    const imageId = Number((record[0] ?? "").trim());
    columns.forEach((column, i) => {
      const value = unescaped((record[i + 1] ?? "").trim());
      if (column && value) batch.push({ imageId, attributeId: column.id, value });
    });
    if (batch.length >= importSettings.writeBatch) {
      yield { batch, rows };
      batch = [];
    }
  }
  if (batch.length) yield { batch, rows };
}

/**
 * Where an import job's next attempt resumes: the check's answer (it found every row good, so it is not run again)
 * and what the batches committed so far wrote: data rows, values, values skipped. Saved with the job
 * (jobs.checkpoint), in each batch's own transaction.
 */
export interface ImportCheckpoint {
  report: ImportReport;
  columns: Column[];
  encoding: TextEncodingName;
  rows: number;
  written: number;
  skipped: number;
  /** Every batch written: the import's report, saved in the transaction of its audit entry (written once). */
  finished?: ImportReport;
  /** Its e-mail sent. */
  mailed?: boolean;
}

/** A job's part in an import: the checkpoint an earlier attempt left (or null), and how to save the next one. */
export interface ImportResume {
  checkpoint: ImportCheckpoint | null;
  save: (checkpoint: ImportCheckpoint, trx?: Trx) => Promise<void>;
}

/**
 * Checks the whole file, then (only when it is good) writes it: `importSettings.writeBatch` values per transaction,
 * the file read between them (never inside one: on SQLite a transaction holds the only connection, and a 100 MB file
 * would stop every other request for its whole write). The check has found every row good, so the writes go through
 * in full; if one fails (the database, not the data), the values are upserts, so importing the file again completes
 * it. A job (`resume`) saves a checkpoint with each batch, in the batch's transaction, and an attempt that finds one
 * skips the check and the rows already written.
 * `onProgress` hears the bytes checked, then the values written, of the check's totals (a job's progress; it also
 * renews the job's lease).
 */
export async function importCsvFile(
  scope: ProjectScope,
  file: string,
  onProgress?: (phase: "check" | "write", done: number, total: number) => Promise<void>,
  fileName: string | null = null,
  resume?: ImportResume,
) {
  let at = resume?.checkpoint;
  if (at?.finished) return at.finished; // an earlier attempt wrote it all, and its audit entry
  if (!at) {
    const size = (await stat(file)).size;
    // A file read as UTF-8 from another encoding has more bytes than on disk: its progress stops at the whole.
    const checked = onProgress && ((bytes: number) => onProgress("check", Math.min(bytes, size), size));
    const { report, columns, encoding } = await checkCsv(scope, file, checked);
    if (report.outcome !== "success") return report;
    at = { report, columns, encoding, rows: 0, written: 0, skipped: 0 };
    await resume?.save(at);
  }
  const { report, columns, encoding } = at;
  let { skipped, written, rows: rowsDone } = at;
  for await (const { batch, rows } of valueBatches(file, columns, encoding, at.rows)) {
    rowsDone = rows;
    const next = (skippedHere: number): ImportCheckpoint => ({
      report,
      columns,
      encoding,
      rows,
      written: written + batch.length,
      skipped: skipped + skippedHere,
    });
    const saved = await importValues(scope, batch, resume && ((trx, skippedHere) => resume.save(next(skippedHere), trx)));
    skipped += saved.skipped;
    written += batch.length;
    await onProgress?.("write", written, report.values);
  }
  // Values of images deleted between the check and the write are not set (they have nowhere to go).
  const done = { ...report, values: report.values - skipped };
  // One entry for the file, once it is written (its transactions are many: none is the import's own). A job's
  // commits with its finished checkpoint, so an attempt after a crash here neither writes nor audits it again.
  const audit = {
    action: "attributes.imported" as const,
    ...byActor(scope.actor),
    subject: `project:${scope.project.id}`,
    detail: { file: fileName, rows: done.rows, values: done.values },
  };
  if (!resume) await recordAudit(audit);
  else
    await write(async (trx) => {
      await recordAudit(audit, trx);
      await resume.save({ report, columns, encoding, rows: rowsDone, written, skipped, finished: done }, trx);
    });
  return done;
}

interface ImportJob {
  userId: number;
  /** The address the file came from (the audit log's). */
  ip?: string | null;
  projectId: number;
  key: string;
  fileName: string;
}

/**
 * The Import Attributes CSV form's file, already received to `file`: a small one checked and applied now (the
 * report), a larger one stored and left to a job ('success waiting'; an e-mail follows). The file is removed.
 */
export async function importUploadedCsv(
  scope: ProjectScope,
  file: string,
  fileName: string,
): Promise<{ report: ImportReport } | { jobId: number }> {
  try {
    if ((await stat(file)).size <= importSettings.inlineMaxBytes) return { report: await importCsvFile(scope, file, undefined, fileName) };
    const key = objectKey("uploads", randomBytes(32).toString("hex"), "csv");
    await storage().putStream(key, createReadStream(file), Number.MAX_SAFE_INTEGER);
    const payload: ImportJob = { userId: scope.actor.id, ip: scope.actor.ip ?? null, projectId: scope.project.id, key, fileName };
    // Retried: a worker killed mid-way leaves a checkpoint the next attempt resumes from (importJob).
    const jobId = await queue(IMPORT_JOB, payload, { ownerUserId: scope.actor.id, maxAttempts: importSettings.jobAttempts });
    return { jobId };
  } finally {
    await rm(file, { force: true });
  }
}

/** A temporary file for an upload or a job (under DATA_DIR/tmp, removed by its user; a crash's swept by housekeeping). */
export const tempCsvPath = (jobId?: number) => tempPath("import", "csv", jobId);

const plural = (n: number, word: string) => `${n.toLocaleString("en")} ${word}${n === 1 ? "" : "s"}`;

/** The report as plain text (the job's e-mail). */
function reportText(report: ImportReport): string {
  if (report.outcome === "success") return `Imported: ${plural(report.values, "value")} from ${plural(report.rows, "row")}.`;
  if (report.errors.some((e) => e.message === IMPORT_STOPPED)) return `${csvRefusalTitle(report.outcome)}: ${IMPORT_STOPPED}`;
  const lines = report.errors.map((e) => `Line ${e.line}: ${e.message}`);
  const more = report.errorCount > report.errors.length ? [`… and ${plural(report.errorCount - report.errors.length, "more error")}.`] : [];
  return [`${csvRefusalTitle(report.outcome)}: nothing was changed. ${plural(report.errorCount, "error")}:`, ...lines, ...more].join("\n");
}

/**
 * The import's job (IMPORT_JOB): a large CSV checked and written in batches, with progress. Each batch commits with
 * a checkpoint (jobs.checkpoint); an attempt that fails (the database, a worker killed and its lease run out) is
 * tried again, up to `importSettings.jobAttempts`, and resumes after the last batch committed, so every row is
 * written once. The stored upload is kept until the last attempt; the e-mail goes once the import is over.
 */
export const importJob = defineJob(runImport, { abandoned: importAbandoned });

/** What an import says when its worker died on its last attempt: what was written stays, the rest is not. */
export const IMPORT_ABANDONED =
  "The import stopped before it finished: the server running it stopped during its last attempt. The rows of the batches it had " +
  "completed were written; the rest were not. Import the file again to complete it (values already written are written the same).";

/** What an import says when its last attempt failed while writing: the batches it had completed stay written. */
export const IMPORT_STOPPED =
  "The import failed part-way. The rows of the batches it had completed were written; the rest were not. Import the file " +
  "again to complete it (values already written are written the same).";

/** Its worker died on the last attempt: the stored upload goes, and the person who imported is told. */
async function importAbandoned(payload: ImportJob) {
  await storage().delete(payload.key);
  const { user, scope } = await resumeProjectScope(payload.userId, payload.projectId, payload.ip ?? null);
  await deliver({
    to: user.email,
    subject: `Attribute import failed: ${payload.fileName}`,
    text: `${payload.fileName} → ${scope.project.name}\n\n${IMPORT_ABANDONED}\n`,
  });
}

async function runImport(payload: ImportJob, job: Job) {
  const last = job.attempts >= job.max_attempts;
  // Whether the stored upload is done with: the import over (applied or refused), or nothing left to retry.
  let over = last;
  const file = await tempCsvPath(job.id);
  try {
    const { user, scope: project } = await resumeProjectScope(payload.userId, payload.projectId, payload.ip ?? null);
    let saved = job.checkpoint ? (JSON.parse(job.checkpoint) as ImportCheckpoint) : null;
    const resume: ImportResume = {
      checkpoint: saved,
      async save(checkpoint, trx) {
        if (!(await saveJobCheckpoint(job, checkpoint, trx))) throw new LeaseLost(job.id);
        saved = checkpoint;
      },
    };
    let report: ImportReport;
    if (saved?.finished)
      report = saved.finished; // written and audited by an attempt that died before its e-mail
    else {
      const object = await storage().get(payload.key);
      if (!object) {
        over = true;
        throw new Error("The uploaded file is gone");
      }
      await pipeline(object.stream, createWriteStream(file, { mode: 0o600 }));
      try {
        // Progress: the check's share of the bar is the file's bytes, the write's the values (half each).
        report = await importCsvFile(
          project,
          file,
          (phase, done, total) => setJobProgress(job.id, Math.floor(((phase === "check" ? 0 : 1) + done / Math.max(total, 1)) * 500), 1000),
          payload.fileName,
          resume,
        );
      } catch (err) {
        log.error("attribute import failed", { projectId: payload.projectId, attempt: job.attempts, error: getErrorMessage(err) });
        // Another worker holds it now; or an attempt is left, which resumes from the checkpoint.
        if (err instanceof LeaseLost) over = false;
        if (err instanceof LeaseLost || !last) throw err;
        // A checkpoint means the file was checked and batches were being written: those committed stay.
        const partly = saved !== null;
        // The checkpoint the failed write set (its `finished` report, say) rolled back with it: none is marked mailed.
        saved = null;
        const message = partly ? IMPORT_STOPPED : CSV_MESSAGES.failed;
        report = { outcome: "errors", rows: 0, values: 0, errors: [{ line: 0, message }], errorCount: 1 };
      }
    }
    // Once: an attempt after a crash between the e-mail and the job's end finds it noted (a crash between the SMTP
    // server's acceptance and the note is the one way it goes twice).
    if (!saved?.mailed) {
      await deliver({
        to: user.email,
        subject: `Attribute import ${report.outcome === "success" ? "done" : "failed"}: ${payload.fileName}`,
        text: `${payload.fileName} → ${project.project.name}\n\n${reportText(report)}\n`,
      });
      if (saved?.finished) await resume.save({ ...saved, mailed: true });
    }
    // The upload is done with once the e-mail went: a failed e-mail is retried, and a refused file checked again.
    over = true;
    return { action: "import", report, back: `/upload/${payload.projectId}/import` };
  } finally {
    await rm(file, { force: true });
    if (over)
      await storage()
        .delete(payload.key)
        .catch(() => {});
  }
}
