import sharp from "sharp";
import { readCapture } from "./capture.server";
import { config } from "~/config.server";
import { sha256 } from "~/lib/crypto.server";
import { MAX_ACTIVE_ATTRIBUTES } from "~/lib/attribute-rules";
import { ConflictError, getErrorMessage } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { FetchRefused, safeFetch } from "~/lib/safe-fetch.server";
import { cleanFileName, titleFromFileName } from "~/lib/schemas";
import { ManifestUnreadable, parseManifest, shownUrl, type ManifestEntry } from "~/lib/wsc-manifest";
import { attributesOf, createAttribute, setAttributeValues } from "~/models/attributes.server";
import { attributeValuesOf } from "~/models/bulk.server";
import { gridTotal } from "~/models/grid.server";
import { updateImage } from "~/models/image-edits.server";
import { parseImage } from "~/models/images.server";
import { saveJobCheckpoint, setJobProgress } from "~/models/jobs.server";
import { ObjectMissing } from "~/models/objects.server";
import {
  imagesToRefresh,
  imageWithChecksum,
  queueReimport,
  refreshImageFiles,
  reindexImages,
  type ReimportJob,
} from "~/models/reimport.server";
import { requireManage, type ProjectScope } from "~/models/scope.server";
import { resumeProjectScope } from "./bulk.server";
import { ImageRejected, storeDerivatives } from "./image-files.server";
import { addImageFile } from "./ingest.server";
import { defineJob, LeaseLost } from "./jobs.server";
import { readObject, storage } from "./storage.server";

/**
 * Re-import (spec 2): a normal project's images are derived again from their originals (thumbnail, preview, the
 * file facts and the search index); a WSC project's manifest is read again from its source and its images fetched,
 * each through the checks of an upload, duplicates found by checksum, WSC (type 1) attributes created or updated.
 */
export function startReimport(scope: ProjectScope) {
  return queueReimport(scope, kindOf(scope));
}
const kindOf = (scope: ProjectScope): ReimportJob["kind"] => (scope.project.wsc && scope.project.wscSource ? "wsc" : "files");

/** Images re-derived per page of the walk (a checkpoint after each); attempts a re-import job is given. */
export const reimportSettings = { page: 50 };
/** Problems a report lists, at most (the count says how many there were). */
const REPORT_CAP = 100;
/** The largest manifest read (10,000 entries of about 500 bytes; it is parsed in memory). */
const MANIFEST_MAX_BYTES = 5 * 1024 * 1024;
/** A WSC re-import stops after this long and says how far it came; run again, it finds what it took by checksum. */
export const wscBudget = { ms: 2 * 60 * 60 * 1000 };

export interface ReimportReport {
  kind: ReimportJob["kind"];
  /** wsc: images new to the project. */
  added: number;
  /** wsc: images already in the project (same file) whose details or attributes changed; files: images derived again whose facts (size, pixels) were wrong. */
  updated: number;
  /** wsc: images already in the project, nothing to change; files: images derived again, facts already right. */
  unchanged: number;
  /** Entries or images that could not be taken; `problems` says why (the first REPORT_CAP). */
  refused: number;
  problems: { where: string; message: string }[];
  /** Set when nothing could be done: the source could not be read. */
  failure?: string;
}

/**
 * Where a re-import's next attempt resumes (jobs.checkpoint): the report so far and the work done. files: the walk's
 * last image id, saved after each page; wsc: entries of the manifest done, saved after each entry, valid only for the
 * same manifest (its checksum): a source whose manifest changed is read from its start again (what was taken is found
 * by checksum).
 */
export interface ReimportCheckpoint {
  report: ReimportReport;
  done: number;
  after?: number;
  manifest?: string;
}
interface Resume {
  checkpoint: ReimportCheckpoint | null;
  save: (checkpoint: ReimportCheckpoint) => Promise<void>;
}

const emptyReport = (kind: ReimportJob["kind"]): ReimportReport => ({ kind, added: 0, updated: 0, unchanged: 0, refused: 0, problems: [] });
function refuse(report: ReimportReport, where: string, message: string) {
  report.refused += 1;
  if (report.problems.length < REPORT_CAP) report.problems.push({ where, message });
}

/** Every live image: derivatives made again from the original, facts read from it, index rows rebuilt. */
async function rederiveProject(scope: ProjectScope, progress: (done: number, total: number) => Promise<void>, resume?: Resume) {
  const from = resume?.checkpoint;
  const report = from?.report ?? emptyReport("files");
  const total = await gridTotal({ ...scope, filter: undefined });
  let done = from?.done ?? 0;
  let after = from?.after ?? 0;
  for (;;) {
    const page = await imagesToRefresh(scope, after, reimportSettings.page);
    if (!page.length) break;
    for (const image of page) {
      try {
        const original = (await readObject(storage(), image.storage_key, Number.MAX_SAFE_INTEGER))?.bytes;
        if (!original) throw new ObjectMissing(image.storage_key);
        const meta = await sharp(original, { limitInputPixels: false }).metadata();
        const { similarity, ...keys } = await storeDerivatives(original, image.checksum, image.rotation, { similarity: true });
        const facts = {
          ...keys,
          // Upright, as stored on upload (EXIF orientation 5–8 swaps the sides).
          width: meta.autoOrient?.width ?? meta.width ?? image.width,
          height: meta.autoOrient?.height ?? meta.height ?? image.height,
          mimeType: image.mime_type,
          sizeBytes: original.length,
        };
        const same = facts.width === image.width && facts.height === image.height && facts.sizeBytes === image.size_bytes;
        await refreshImageFiles(scope, image, facts, { capture: await readCapture(original), similarity });
        report[same ? "unchanged" : "updated"] += 1;
      } catch (err) {
        if (err instanceof ObjectMissing) refuse(report, `Image ${image.id}`, "The original file is missing from storage.");
        else if (err instanceof ImageRejected) refuse(report, `Image ${image.id}`, err.message);
        else {
          log.warn("re-derive failed", { imageId: image.id, error: getErrorMessage(err) });
          refuse(report, `Image ${image.id}`, "Its files could not be made again.");
        }
      }
    }
    await reindexImages(
      scope,
      page.map((i) => i.id),
    );
    after = page[page.length - 1]!.id;
    done += page.length;
    await resume?.save({ report, done, after });
    await progress(Math.min(done, total), Math.max(total, done));
  }
  return report;
}

/** The project's source read again; every entry fetched, checked and added or matched by checksum. */
async function importWscSource(scope: ProjectScope, progress: (done: number, total: number) => Promise<void>, resume?: Resume) {
  const source = scope.project.wscSource;
  if (!source) throw new ManifestUnreadable("The project has no WSC source.");
  const allowedPrivateHosts = config().wscAllowedPrivateHosts;
  const manifest = await safeFetch(source, { allowedPrivateHosts, maxBytes: MANIFEST_MAX_BYTES });
  const { entries, problems } = parseManifest(manifest.body, manifest.contentType);
  const total = entries.length;
  const checksum = sha256(manifest.body);
  const from = resume?.checkpoint?.manifest === checksum ? resume.checkpoint : null;
  const report = from?.report ?? emptyReport("wsc");
  let done = from?.done ?? 0;
  await progress(done, total);
  // Attribute notes first: the report's cap must not drop them behind the entries' problems. A resumed attempt's
  // report has them already.
  const attributeIds = await wscAttributes(scope, entries, from ? emptyReport("wsc") : report);
  if (!from) for (const p of problems) refuse(report, `Entry ${p.line}`, p.message);
  const stopAt = Date.now() + wscBudget.ms;
  for (const entry of entries.slice(done)) {
    if (Date.now() > stopAt) {
      report.problems.unshift({
        where: "Time limit",
        message: `Stopped after ${Math.round(wscBudget.ms / 60_000)} minutes with ${(total - done).toLocaleString("en")} entries not reached; run Re-import again to go on (images already taken are found by checksum).`,
      });
      break;
    }
    const where = `Entry ${entry.line} (${shownUrl(entry.url)})`;
    try {
      const file = await safeFetch(entry.url, { allowedPrivateHosts, maxBytes: config().maxImageBytes });
      const outcome = await addOrUpdate(scope, entry, file.body, attributeIds);
      report[outcome] += 1;
    } catch (err) {
      if (err instanceof FetchRefused || err instanceof ImageRejected) refuse(report, where, err.message);
      else {
        log.warn("wsc entry failed", { projectId: scope.project.id, line: entry.line, error: getErrorMessage(err) });
        refuse(report, where, "The image could not be stored.");
      }
    }
    done += 1;
    await resume?.save({ report, done, manifest: checksum });
    if (done % 10 === 0 || done === total) await progress(done, total);
  }
  return report;
}

/**
 * The attribute of each name the manifest uses: an existing WSC (type 1) attribute, or a new one. A name taken by a
 * user or system attribute is not overwritten: its values are left out and the report says so once.
 */
async function wscAttributes(scope: ProjectScope, entries: ManifestEntry[], report: ReimportReport) {
  const names = new Map<string, string>();
  for (const e of entries)
    for (const name of Object.keys(e.attributes)) if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
  const note = (name: string, message: string) => {
    if (report.problems.length < REPORT_CAP) report.problems.push({ where: `Attribute ${name}`, message });
  };
  const byName = async () => new Map((await attributesOf(scope)).map((a) => [a.name.toLowerCase(), a]));
  let existing = await byName();
  const ids = new Map<string, number>();
  for (const [lower, name] of names) {
    let found = existing.get(lower);
    if (!found) {
      try {
        await createAttribute(scope, { name, type: 1 });
      } catch (err) {
        // Someone created it meanwhile: take it as it is now.
        if (!(err instanceof ConflictError)) throw err;
      }
      existing = await byName();
      found = existing.get(lower)!;
      if (found.type === 1 && !found.active)
        note(name, `Created inactive: the project already has ${MAX_ACTIVE_ATTRIBUTES} active attributes.`);
    }
    if (found.type !== 1) {
      note(name, "A project attribute of this name is not a WSC attribute; its values were left out.");
      continue;
    }
    ids.set(lower, found.id);
  }
  return ids;
}

async function addOrUpdate(scope: ProjectScope, entry: ManifestEntry, body: Buffer, attributeIds: Map<string, number>) {
  const values = (imageId: number) =>
    Object.entries(entry.attributes)
      .filter(([name]) => attributeIds.has(name.toLowerCase()))
      .map(([name, value]) => ({ imageId, attributeId: attributeIds.get(name.toLowerCase())!, value }));
  const existing = await imageWithChecksum(scope, sha256(body));
  if (existing) {
    // The same file again: its details follow the source where the source gives them.
    const image = parseImage(existing);
    const next = {
      title: entry.title || image.title,
      description: entry.description || image.description,
      keywords: entry.keywords.length ? entry.keywords : image.keywords,
      ocrText: image.ocr_text,
    };
    const version = await updateImage(scope, image, next);
    const current = new Map((await attributeValuesOf([image.id])).map((v) => [v.attribute_id, v.value]));
    const changed = values(image.id).filter((v) => current.get(v.attributeId) !== v.value);
    await setAttributeValues(scope, changed);
    return version !== null || changed.length ? "updated" : "unchanged";
  }
  const last = new URL(entry.url).pathname.split("/").pop() || "image";
  let decoded = last;
  try {
    decoded = decodeURIComponent(last);
  } catch {
    // A malformed escape: the name as written.
  }
  const name = cleanFileName(decoded);
  const id = await addImageFile(scope, body, {
    title: entry.title || titleFromFileName(name),
    description: entry.description,
    keywords: entry.keywords,
    ocrText: "",
    originalName: name,
  });
  await setAttributeValues(scope, values(id));
  return "added";
}

/**
 * The re-import's job (REIMPORT_JOB): long, since a WSC source may take hours. Its progress is kept as a checkpoint
 * (ReimportCheckpoint) by the lease holder only: a worker killed mid-way (its lease run out) leaves the job to another
 * that resumes after the last page or entry done, and a worker whose lease was taken over stops (LeaseLost).
 */
export const reimportJob = defineJob(
  async (payload: ReimportJob, job) => {
    const { scope: resumed } = await resumeProjectScope(payload.userId, payload.projectId);
    // Who may, and which kind, as they are now (a manager since demoted; a WSC flag since cleared).
    const scope = requireManage(resumed);
    const kind = kindOf(scope);
    const progress = (done: number, total: number) => setJobProgress(job.id, done, total);
    const earlier = job.checkpoint ? (JSON.parse(job.checkpoint) as ReimportCheckpoint) : null;
    const resume: Resume = {
      checkpoint: earlier?.report.kind === kind ? earlier : null,
      async save(checkpoint) {
        if (!(await saveJobCheckpoint(job, checkpoint))) throw new LeaseLost(job.id);
      },
    };
    let report: ReimportReport;
    try {
      report = kind === "wsc" ? await importWscSource(scope, progress, resume) : await rederiveProject(scope, progress, resume);
    } catch (err) {
      if (err instanceof LeaseLost) throw err;
      if (err instanceof FetchRefused || err instanceof ManifestUnreadable)
        // The source itself could not be read: the report says why (the refusal's words: no stack, no query string).
        report = { ...emptyReport(kind), failure: `The WSC source could not be read. ${err.message}` };
      else {
        log.error("re-import stopped", { projectId: payload.projectId, attempt: job.attempts, error: getErrorMessage(err) });
        // An attempt is left: it resumes from the checkpoint.
        if (job.attempts < job.max_attempts) throw err;
        report = {
          ...emptyReport(kind),
          failure:
            "The re-import stopped part-way; what it had done stays (images already taken are found again by checksum). Please try again.",
        };
      }
    }
    return { action: "reimport", reimport: report, back: `/upload/${payload.projectId}` };
  },
  { long: true },
);
