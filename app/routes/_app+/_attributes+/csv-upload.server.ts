import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { CSV_MAX_BYTES, CSV_MESSAGES } from "../../../lib/attribute-rules";
import { HttpError } from "../../../lib/errors";
import { openMultipart, requireMultipart } from "../../../lib/multipart.server";

/** A refused CSV upload: the dialog's title and its text (spec 2), with the status it answers. */
export class CsvRefused extends HttpError {
  constructor(
    status: number,
    readonly title: string,
    readonly detail: string,
  ) {
    super(status, `${title}: ${detail}`);
    this.name = "CsvRefused";
  }
}

const tooLarge = () => new CsvRefused(413, CSV_MESSAGES.size, CSV_MESSAGES.sizeHelp);
const wrongType = () => new CsvRefused(415, CSV_MESSAGES.type, CSV_MESSAGES.typeHelp);

/**
 * The Import Attributes CSV form's one file, streamed to `file` (never held in memory): refused before a byte is
 * stored when the declared length is over 100 MB or the name is not .csv, and stopped (the file removed) the moment
 * it passes 100 MB. A malformed or interrupted body answers 400 and leaves no file behind. Returns the file's name.
 */
export async function receiveCsvUpload(request: Request, file: string): Promise<string> {
  requireMultipart(request, "the file");
  const declared = Number(request.headers.get("Content-Length") ?? 0);
  if (declared > CSV_MAX_BYTES + 64 * 1024) {
    // Answered at once; the body is read and thrown away (never stored), so the browser gets to read the answer.
    void request.body?.pipeTo(new WritableStream()).catch(() => {});
    throw tooLarge();
  }
  const { source, parser, onFailure } = openMultipart(request, "the file", { files: 1, fields: 10, fileSize: CSV_MAX_BYTES });
  let name: string | null = null;
  let written: Promise<void> | null = null;
  let part: Readable | null = null;
  try {
    await new Promise<void>((resolve, reject) => {
      let failed: Error | null = null;
      /** Stops reading for good: the rest of the body is thrown away, the file being written fails (and is removed). */
      const fail = (error: Error) => {
        failed ??= error;
        source.unpipe(parser);
        source.resume();
        part?.destroy(failed);
        reject(failed);
      };
      parser.on("file", (field, stream, info) => {
        if (field !== "file" || !info.filename || name !== null) return void stream.resume();
        name = info.filename;
        if (!/\.csv$/i.test(info.filename)) {
          stream.resume();
          return fail(wrongType());
        }
        part = stream;
        stream.on("limit", () => fail(tooLarge()));
        written = pipeline(stream, createWriteStream(file, { mode: 0o600 })).catch((err: Error) => fail(failed ?? err));
      });
      onFailure(fail);
      parser.on("close", () => void (written ?? Promise.resolve()).then(() => (failed ? reject(failed) : resolve())));
      source.pipe(parser);
    });
  } catch (error) {
    await (written as Promise<void> | null)?.catch(() => {});
    await rm(file, { force: true });
    throw error;
  }
  if (name === null) throw new CsvRefused(400, CSV_MESSAGES.type, CSV_MESSAGES.typeHelp);
  return name;
}
