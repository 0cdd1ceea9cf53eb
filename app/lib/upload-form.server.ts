import { unstable_parseMultipartFormData, type UploadHandler } from "@remix-run/node";
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

async function drain(data: AsyncIterable<Uint8Array>) {
  for await (const _ of data);
}

/**
 * The upload form without JavaScript: the same three steps as the browser's uploader, run by the server.
 * Each file part is streamed to a freshly signed upload key (never held whole in memory), then registered.
 * A failing file gets the spec's message for its step and leaves the others going.
 */
export async function receiveFormUploads(request: Request, actor: Actor, projectId: number): Promise<UploadResult[]> {
  const results: UploadResult[] = [];
  const staged: { name: string; key: string }[] = [];
  const handler: UploadHandler = async ({ name, filename, data }) => {
    if (name !== "files" || !filename) return drain(data).then(() => undefined);
    const fileName = cleanFileName(filename);
    if (staged.length + results.length >= MAX_FORM_FILES) {
      await drain(data);
      results.push({ name: fileName, error: UPLOAD_ERRORS.put, detail: `At most ${MAX_FORM_FILES} files at a time without JavaScript.` });
      return undefined;
    }
    let key: string;
    try {
      ({ key } = await signUpload(actor, projectId, fileName));
    } catch (err) {
      await drain(data);
      if (err instanceof NotFoundError) throw err;
      results.push({ name: fileName, error: UPLOAD_ERRORS.sign });
      return undefined;
    }
    try {
      await storage().putStream(key, data, config().maxImageBytes);
      staged.push({ name: fileName, key });
    } catch (err) {
      await drain(data);
      const detail = err instanceof ObjectTooLarge ? `The file is larger than ${Math.round(config().maxImageBytes / 1024 / 1024)} MB.` : undefined;
      if (!detail) log.warn("form upload failed", { error: String(err) });
      results.push({ name: fileName, error: UPLOAD_ERRORS.put, detail });
    }
    return undefined;
  };
  await unstable_parseMultipartFormData(request, handler);
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
