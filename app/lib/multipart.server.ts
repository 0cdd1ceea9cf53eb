import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import busboy, { type BusboyConfig } from "busboy";
import { HttpError, InvalidError } from "./errors";

/** A body that is not multipart with a boundary answers 415 before anything is read. */
export function requireMultipart(request: Request, what: "the file" | "the files") {
  if (!/^multipart\/form-data;.*boundary=/i.test(request.headers.get("Content-Type") ?? ""))
    throw new HttpError(415, `Send ${what} as multipart/form-data.`);
}

/**
 * A streamed multipart body (the no-JavaScript image upload, the attribute CSV): the request checked for its type,
 * busboy set up over it, and the ways a body goes wrong (malformed, interrupted, aborted) reported to `fail` with
 * the messages every upload gives. The caller listens for its files and pipes `source` into `parser` when ready.
 * (Remix's own multipart parser is not used: it fails the whole request on a file name holding `=` or `;`.)
 */
export function openMultipart(request: Request, what: "the file" | "the files", limits: BusboyConfig["limits"]) {
  requireMultipart(request, what);
  if (!request.body) throw new InvalidError(what === "the file" ? "No file was sent." : "No files were sent.");
  const source = Readable.fromWeb(request.body as WebReadableStream);
  const parser = busboy({ headers: Object.fromEntries(request.headers), defParamCharset: "utf8", limits });
  // busboy reports a truncated body on the part being read as well as on the parser: the parser's report (below)
  // is the one acted on, and a part's must never go unheard (an 'error' without a listener ends the process).
  parser.on("file", (_field, stream: Readable) => stream.on("error", () => {}));
  const onFailure = (fail: (error: Error) => void) => {
    parser.on("error", () => fail(new InvalidError("The upload could not be read: the form data is incomplete or malformed.")));
    source.on("error", () => fail(new InvalidError("The upload was interrupted.")));
    request.signal.addEventListener("abort", () => fail(new InvalidError("The upload was interrupted.")));
  };
  return { source, parser, onFailure };
}
