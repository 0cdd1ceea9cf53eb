import { EXPORT_JOB } from "~/lib/job-types";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { readFile, rm, stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { config } from "~/config.server";
import { randomToken } from "~/lib/crypto.server";
import { InvalidError } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { expiredExports, forgetExport, recordExport } from "~/models/attribute-exports.server";
import { saveJobCheckpoint, setJobProgress } from "~/models/jobs.server";
import { attributeColumns, attributeValuesByImage, countSelection, selectionRows, type Picked } from "~/models/bulk.server";
import type { MemberScope } from "~/models/scope.server";
import { resumeScope, selectionJobRef, spreadsheetCsv, type SelectionJobRef } from "./bulk.server";
import { defineJob, queue } from "./jobs.server";
import { deliver } from "./mail.server";
import { objectKey, storage } from "./storage.server";
import { tempPath } from "./temp-files.server";

/** The page's answer at once (spec 1): the file follows by e-mail. */
export const EXPORT_QUEUED = "Image attributes will be sent to your email shortly.";
const CHUNK = 1000;
const EXPORT_COLUMNS = ["id", "title", "keywords"] as const;

interface ExportJob extends SelectionJobRef {
  picked: Picked;
}

/**
 * Export attributes by e-mail, from the image panel (one image) or the bulk menu (a selection): the ids are checked
 * now (a foreign or unknown one fails the whole request), then a job writes the CSV and mails it.
 */
export async function requestAttributeExport(scope: MemberScope, picked: Picked) {
  const count = await countSelection(scope, picked);
  if (!count) throw new InvalidError("No images are selected.");
  await queue(EXPORT_JOB, { ...selectionJobRef(scope), picked } satisfies ExportJob, {
    ownerUserId: scope.actor.id,
    total: count,
    maxAttempts: 3,
  });
  return count;
}

/**
 * The CSV: image id, title, keywords and every attribute of the project as a column, UTF-8 with a BOM (spreadsheet
 * programs read it as UTF-8), cells that a spreadsheet would run as a formula escaped (`escape_formulas`). Written
 * 1,000 rows at a time to `file`, never held whole.
 */
export async function writeAttributesCsv(
  scope: MemberScope,
  picked: Picked,
  file: string,
  onPage?: (rows: number) => Promise<void>,
): Promise<number> {
  const attributes = await attributeColumns(scope.project.id);
  const csv = spreadsheetCsv(["Image ID", "Title", "Keywords", ...attributes.map((a) => a.name)]);
  const out = createWriteStream(file, { mode: 0o600 });
  const done = pipeline(csv, out);
  let rows = 0;
  try {
    let afterId = 0;
    for (;;) {
      const page = await selectionRows(scope, picked, { afterId, limit: CHUNK, columns: EXPORT_COLUMNS });
      if (!page.length) break;
      const byImage = await attributeValuesByImage(page.map((r) => r.id));
      for (const r of page) {
        const own = byImage.get(r.id);
        const more = csv.write([
          r.id,
          r.title,
          (JSON.parse(r.keywords) as string[]).join(", "),
          ...attributes.map((a) => own?.get(a.id) ?? ""),
        ]);
        // A file that fails (disk full) ends `done` with the error: never wait for a drain that will not come.
        if (!more) await Promise.race([once(csv, "drain"), done]);
      }
      rows += page.length;
      afterId = page[page.length - 1]!.id;
      await onPage?.(rows);
    }
    csv.end();
  } catch (err) {
    csv.destroy(err as Error);
  }
  await done;
  return rows;
}

const plural = (n: number) => `${n.toLocaleString("en")} image${n === 1 ? "" : "s"}`;

/** The export's job (EXPORT_JOB): the CSV written 1,000 rows at a time, then mailed. */
export const exportJob = defineJob(async (payload: ExportJob, job) => {
  // Its e-mail went before an attempt died: done, not sent again (a crash between the SMTP server's acceptance and
  // this note is the one way it goes twice). Otherwise it starts over: an export only reads.
  const sent = job.checkpoint ? (JSON.parse(job.checkpoint) as { mailed: { rows: number; size: number } }).mailed : null;
  if (sent) return sent;
  const { scope, user } = await resumeScope(payload);
  const cfg = config();
  const file = await tempPath("export", "csv", job.id);
  const name = `${
    scope.project.name
      .replace(/[^\p{L}\p{N}]+/gu, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 40) || "images"
  }-attributes-${new Date().toISOString().slice(0, 10)}.csv`;
  try {
    // Progress per page also renews the job's lease: a long export is not taken over by a second runner.
    const rows = await writeAttributesCsv(scope, payload.picked, file, (done) => setJobProgress(job.id, done));
    const size = (await stat(file)).size;
    const subject = `Image attributes: ${scope.project.name}`;
    const intro = `The attributes of ${plural(rows)} of ${scope.project.name}, as a CSV file (UTF-8; one row per image, one column per attribute).`;
    if (size <= cfg.attributeExport.attachMaxBytes) {
      await deliver({
        to: user.email,
        subject,
        text: `${intro}\n\nThe file is attached: ${name}\n`,
        attachments: [{ filename: name, contentType: "text/csv; charset=utf-8", contentBase64: (await readFile(file)).toString("base64") }],
      });
    } else {
      const token = randomToken(32);
      const key = objectKey("exports", randomBytes(32).toString("hex"), "csv");
      await storage().putStream(key, createReadStream(file), size + 1);
      const expiresAt = Date.now() + cfg.attributeExport.linkMs;
      await recordExport({
        token,
        userId: user.id,
        projectId: scope.project.id,
        storageKey: key,
        fileName: name,
        sizeBytes: size,
        expiresAt,
      });
      const link = `${cfg.appUrl}/exports/${token}`;
      await deliver({
        to: user.email,
        subject,
        text: `${intro}\n\nIt is too large to attach (${Math.ceil(size / 1024).toLocaleString("en")} KB). Download it, signed in as yourself, until ${new Date(expiresAt).toUTCString()}:\n${link}\n`,
      });
    }
    await saveJobCheckpoint(job, { mailed: { rows, size } });
    return { rows, size };
  } finally {
    await rm(file, { force: true });
  }
});

/** Housekeeping: expired export files and their rows. */
export async function sweepExpiredExports() {
  for (const row of await expiredExports()) {
    try {
      await storage().delete(row.storage_key);
      await forgetExport(row.id);
    } catch (err) {
      log.warn("export sweep failed", { error: (err as Error).message });
    }
  }
}
