import { Readable } from "node:stream";
import busboy from "busboy";
import { config } from "~/config.server";
import { log } from "~/lib/log.server";
import { NotFoundError, type Actor } from "~/models/actor";
import { ImageRejected } from "~/services/image-files.server";
import { registerUpload, signUpload } from "~/services/ingest.server";
import { ObjectTooLarge, storage } from "~/services/storage.server";
import { cleanFileName, titleFromFileName } from "./schemas";
import { UPLOAD_ERRORS } from "./uploads";

/** Files one form post may carry (the JavaScript uploader queues any number). */
export const MAX_FORM_FILES = 20;

export interface UploadResult {
  name: string;
  id?: number;
  error?: string;
  detail?: string;
}

/** Browsers percent-encode `"`, CR and LF in a multipart file name; the rest arrives as typed (UTF-8). */
const decodeName = (name: string) => name.replace(/%22/g, '"').replace(/%0D|%0A/gi, " ");

/**
 * The upload form without JavaScript: the same three steps as the browser's uploader, run by the server.
 * Each file part is streamed (busboy) to a freshly signed upload key, never held whole in memory, then registered.
 * A failing file gets the spec's message for its step and leaves the others going.
 * (Remix's own multipart parser is not used: it fails the whole request on a file name holding `=` or `;`.)
 */
export async function receiveFormUploads(request: Request, actor: Actor, projectId: number): Promise<UploadResult[]> {
  const results: UploadResult[] = [];
  const staged: { name: string; key: string }[] = [];
  const maxBytes = config().maxImageBytes;
  let files = 0;
  let work = Promise.resolve();

  async function receive(stream: Readable, fileName: string) {
    files += 1;
    if (files > MAX_FORM_FILES) {
      results.push({ name: fileName, error: UPLOAD_ERRORS.put, detail: `At most ${MAX_FORM_FILES} files at a time without JavaScript.` });
      return;
    }
    let key: string;
    try {
      ({ key } = await signUpload(actor, projectId, fileName));
    } catch (err) {
      if (err instanceof NotFoundError) throw err;
      results.push({ name: fileName, error: UPLOAD_ERRORS.sign });
      return;
    }
    try {
      await storage().putStream(key, stream, maxBytes);
      staged.push({ name: fileName, key });
    } catch (err) {
      const detail = err instanceof ObjectTooLarge ? `The file is larger than ${Math.round(maxBytes / 1024 / 1024)} MB.` : undefined;
      if (!detail) log.warn("form upload failed", { error: String(err) });
      results.push({ name: fileName, error: UPLOAD_ERRORS.put, detail });
    }
  }

  await new Promise<void>((resolve, reject) => {
    const parser = busboy({ headers: Object.fromEntries(request.headers), defParamCharset: "utf8", limits: { fields: 20, parts: MAX_FORM_FILES * 2 + 20 } });
    parser.on("file", (field, stream, info) => {
      if (field !== "files" || !info.filename) {
        stream.resume();
        return;
      }
      // Parts arrive one after another; each is written before the next is read. Whatever a part leaves unread is drained.
      work = work.then(() => receive(stream, cleanFileName(decodeName(info.filename)))).finally(() => stream.resume());
    });
    parser.on("error", reject);
    parser.on("close", () => work.then(resolve, reject));
    if (!request.body) return reject(new Error("No body"));
    Readable.fromWeb(request.body as import("node:stream/web").ReadableStream).on("error", reject).pipe(parser);
  });
  for (const { name, key } of staged) {
    try {
      const id = await registerUpload(actor, projectId, key, { title: titleFromFileName(name), description: "", keywords: [], ocrText: "", originalName: name });
      results.push({ name, id });
    } catch (err) {
      if (err instanceof ImageRejected) results.push({ name, error: UPLOAD_ERRORS.register, detail: err.message });
      else {
        log.error("registration failed", { error: err instanceof Error ? err.message : String(err) });
        results.push({ name, error: UPLOAD_ERRORS.register });
      }
    }
  }
  return results;
}
