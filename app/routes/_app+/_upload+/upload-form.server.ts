import { Readable } from "node:stream";
import { config } from "~/config.server";
import { getErrorMessage, TooLargeError } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { clientNotFound, type ProjectScope } from "~/models/scope.server";
import { ImageRejected } from "~/services/image-files.server";
import { registerUpload, signUpload } from "~/services/ingest.server";
import { ObjectTooLarge } from "~/services/storage-contract";
import { storage } from "~/services/storage.server";
import { projectScopeOf, type ScopeRequest } from "~/web/scopes.server";
import { cleanFileName, titleFromFileName } from "../../../lib/schemas";
import { openMultipart } from "../../../lib/multipart.server";
import { UPLOAD_ERRORS } from "../../../lib/uploads";

/**
 * The project of /upload/:clientID and its pages, when the actor may upload to it (or, with `manage`, manage it): an
 * unknown or foreign id gets the spec's 'Client not found', a member whose role does not allow it a 403 saying so.
 * The load context gives the actor their address (the audit log's, for the writes it records).
 */
export function uploadScope(req: ScopeRequest, clientID: string | undefined, opts: { need?: "edit" | "manage" } = {}) {
  const need = opts.need === "manage" ? "manage" : "write";
  return projectScopeOf(req, clientID, { need, notFound: clientNotFound });
}

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

const megabytes = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;

/**
 * The upload form without JavaScript: the same three steps as the browser's uploader, run by the server.
 * Each file part is streamed (busboy) to a freshly signed upload key, never held whole in memory, then registered.
 * A file the server refuses gets what is wrong with it, and the others go on; a file over the size limit stops the
 * whole post at once with 413 (the rest of the body is drained, not stored); a malformed or aborted body answers
 * 400 and leaves nothing behind (no open file, no temporary file).
 */
export async function receiveFormUploads(request: Request, scope: ProjectScope): Promise<UploadResult[]> {
  const results = await receiveParts(request, scope);
  // In the order the files were sent (a refusal while reading is known before the registrations that follow).
  return results.sort((a, b) => a.part - b.part).map(({ part: _part, ...result }) => result);
}

async function receiveParts(request: Request, scope: ProjectScope): Promise<(UploadResult & { part: number })[]> {
  const { source, parser, onFailure } = openMultipart(request, "the files", { fields: 20, parts: MAX_FORM_FILES * 2 + 20 });
  const results: (UploadResult & { part: number })[] = [];
  const staged: { name: string; key: string; part: number }[] = [];
  const maxBytes = config().maxImageBytes;
  let files = 0;
  let work = Promise.resolve();
  let failure: Error | null = null;

  const current = new Set<Readable>();

  /** Stops reading for good: every file stream still open fails, so its temporary file is removed. */
  const stop = (error: Error) => {
    failure ??= error;
    source.unpipe(parser);
    for (const stream of current) stream.destroy(error);
  };

  async function receive(stream: Readable, fileName: string) {
    files += 1;
    const part = files;
    if (part > MAX_FORM_FILES) {
      results.push({ name: fileName, error: `At most ${MAX_FORM_FILES} files in one upload.`, part });
      return;
    }
    const { key } = await signUpload(scope, fileName);
    try {
      await storage().putStream(key, stream, maxBytes);
      staged.push({ name: fileName, key, part });
    } catch (err) {
      if (err instanceof ObjectTooLarge) {
        const tooLarge = new TooLargeError(`${fileName}: The file is larger than ${megabytes(maxBytes)}.`);
        stop(tooLarge);
        // Read the rest of the body and throw it away, so the browser gets to read the answer.
        source.resume();
        throw tooLarge;
      }
      if (failure) throw failure;
      log.warn("form upload failed", { error: getErrorMessage(err) });
      results.push({ name: fileName, error: UPLOAD_ERRORS.put, part });
    }
  }

  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (error: Error) => {
        stop(error);
        reject(error);
      };
      parser.on("file", (field, stream, info) => {
        if (field !== "files" || !info.filename) {
          stream.resume();
          return;
        }
        current.add(stream);
        // Parts arrive one after another; each is written before the next is read. Whatever a part leaves unread is drained.
        work = work
          .then(() => (failure ? undefined : receive(stream, cleanFileName(decodeName(info.filename)))))
          .finally(() => {
            current.delete(stream);
            stream.resume();
          });
        work.catch(fail);
      });
      onFailure(fail);
      parser.on("close", () => work.then(() => (failure ? reject(failure) : resolve()), fail));
      source.pipe(parser);
    });
  } catch (error) {
    // Upload keys signed for files that did not arrive whole are swept with their expired records.
    for (const { key } of staged)
      await storage()
        .delete(key)
        .catch(() => {});
    throw error;
  }

  for (const { name, key, part } of staged) {
    try {
      const id = await registerUpload(scope, key, {
        title: titleFromFileName(name),
        description: "",
        keywords: [],
        ocrText: "",
        originalName: name,
      });
      results.push({ name, id, part });
    } catch (err) {
      if (err instanceof ImageRejected) results.push({ name, error: err.message, part });
      else {
        log.error("registration failed", { error: getErrorMessage(err) });
        results.push({ name, error: UPLOAD_ERRORS.register, part });
      }
    }
  }
  return results;
}
