import { availableParallelism } from "node:os";
import { config } from "~/config.server";
import { release } from "~/lib/buffers.server";
import { LIMITS } from "~/lib/schemas";
import { machineMayWrite, ocrTarget, saveMachineText, type OcrPayload } from "~/models/image-ocr.server";
import { defineJob, JobCannotSucceed } from "./jobs.server";
import { rawPixels } from "./image-files.server";
import { createOcrPool, type OcrLine, type OcrPool } from "./ocr-pool.server";
import { readObject, storage } from "./storage.server";

/**
 * The OCR job (OCR_JOB): the text in an image's picture, read from its preview (upright, turned as people see it)
 * in the pool's worker threads, saved when the field is empty or the machine's (models/image-ocr.server.ts).
 */

let pool: OcrPool | null = null;
const ocrPool = () => (pool ??= createOcrPool(config().ocr!));

/** Lets the OCR workers go (shutdown, tests). */
export async function closeOcr() {
  await pool?.close();
  pool = null;
}

/** What the job returns, kept as its result (a done job's payload is dropped, so the image is named here). */
export type OcrResult = { imageId: number } & ({ skipped: string } | { characters: number; version: number | null });

export async function readImageText({ imageId }: OcrPayload): Promise<OcrResult> {
  if (!config().ocr) return { imageId, skipped: "OCR is off." };
  const target = await ocrTarget(imageId);
  if (!target) return { imageId, skipped: "The image was deleted." };
  if (!machineMayWrite(target)) return { imageId, skipped: "A person wrote its OCR text." };
  // A missing preview may be a store briefly away: retried after the backoff.
  const preview = await readObject(storage(), target.preview_key, 64 * 1024 * 1024);
  if (!preview) throw new Error(`The preview ${target.preview_key} could not be read.`);
  const text = await readPictureText(preview.bytes);
  return { imageId, characters: text.length, version: await saveMachineText(target, text) };
}

/** The text in a picture (an image's preview), as the OCR field keeps it. */
export async function readPictureText(picture: Buffer): Promise<string> {
  const grey = await forOcr(picture);
  const lines = await ocrPool().read(grey);
  // Read and done with (a reading that failed may still be queued in tesseract.js: its picture is left to the collector).
  release(grey);
  return cleanOcrText(lines);
}

/**
 * The picture as tesseract reads it best and fastest: grey (its own conversion of a colour picture lost a third of the
 * noisy set's words and read at a third of the speed), uncompressed (PGM: nothing to deflate here and inflate there).
 * The grey is the pixels' luma (Rec. 601 weights on the encoded values, as OCR pipelines take it), made here in one
 * pass: libvips' own conversion to B_W took 10 ms more per preview, a sixth of what the job adds to tesseract's reading
 * (its `recomb` 20 ms more). The pass holds the event loop about 5 ms a megapixel; the project page's p99 while OCR
 * runs stayed within that of an idle server (bench P14b: 0.91×).
 * A picture that will not decode never will: JobCannotSucceed.
 */
export async function forOcr(picture: Buffer): Promise<Buffer> {
  const { data, width, height, channels } = await rawPixels(picture).catch(() => {
    throw new JobCannotSucceed("The image's preview could not be decoded; it may be damaged.");
  });
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`);
  const out = Buffer.allocUnsafe(header.length + width * height);
  header.copy(out);
  let o = header.length;
  if (channels < 3) for (let i = 0; i < data.length; i += channels) out[o++] = data[i]!;
  else for (let i = 0; i < data.length; i += channels) out[o++] = (data[i]! * 77 + data[i + 1]! * 150 + data[i + 2]! * 29 + 128) >> 8;
  release(data);
  return out;
}

/** Below this (0–100), a line is mostly texture read as letters: only its words read with SURE_WORD are kept. */
const SURE_LINE = 50;
const SURE_WORD = 60;

/** A word worth keeping from an unsure line: read with confidence, and more than one letter or digit long. */
const sureWord = (w: OcrLine["words"][number]) => w.confidence >= SURE_WORD && (w.text.match(/[\p{L}\p{N}]/gu)?.length ?? 0) > 1;

/**
 * Tesseract's lines as the field keeps them: a line it is unsure of cut to the words it is sure of (grain, foliage
 * and shelf edges come out as strings of letters of low confidence, and lone characters); spaces single; lines without a letter or a
 * digit dropped; no more than the field holds.
 */
export function cleanOcrText(lines: OcrLine[]): string {
  return lines
    .map((line) =>
      (line.confidence >= SURE_LINE
        ? line.text
        : line.words
            .filter(sureWord)
            .map((w) => w.text)
            .join(" ")
      )
        .replace(/\s+/g, " ")
        .trim(),
    )
    .filter((line) => /[\p{L}\p{N}]/u.test(line))
    .reduce(withinField, "");
}

/**
 * Lines added while the text fits the field: counted as a browser posts it (each line break as CRLF), so that the
 * edit form can always save it back. A line that does not fit is left out whole.
 */
function withinField(text: string, line: string): string {
  const next = text ? `${text}\n${line}` : line;
  return next.length + (next.match(/\n/g)?.length ?? 0) <= LIMITS.ocr ? next : text;
}

/**
 * OCR jobs run in slots of their own, so the other kinds of job keep theirs: as many as the pool has threads, and
 * one more where a core is left over, so that the next picture is read from the store and decoded on it while
 * tesseract reads the current one (on one core the decode would only take time from the reading). At most
 * OCR_CONCURRENCY readings still run at once: the extra job waits for a free worker in the pool's queue.
 */
export const ocrJob = defineJob(readImageText, { slots: ocrSlots });

export function ocrSlots(): number {
  const threads = config().ocr?.concurrency ?? 1;
  return threads + (availableParallelism() > threads ? 1 : 0);
}
