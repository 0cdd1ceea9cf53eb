// What reaches the app: only methods it answers, only bodies it can read. Every refusal is a 4xx with a clear
// message and one log line, never a crash or a stack trace. Bodies (other than the two upload paths, which
// stream with their own limits) are read whole here, at most 1 MiB, checked for their declared type, and handed
// to Remix as they are, so no route ever meets a truncated multipart body or broken JSON.
import { STATUS_CODES, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { createReadableStreamFromReadable, createRequestHandler, type AppLoadContext, type ServerBuild } from "@remix-run/node";
import busboy from "busboy";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { WarnLog } from "./admission";
import { loggedPath, requestIdOf } from "./observe";

/** What the checks add to Express's request: the body they read, and the shared-page front's pending answer. */
declare module "express-serve-static-core" {
  interface Request {
    checkedBody?: Buffer;
    sharedPage?: AppLoadContext["sharedPage"];
  }
}

function headersOf(req: Request) {
  const headers = new Headers();
  for (const [key, values] of Object.entries(req.headers)) {
    if (Array.isArray(values)) for (const value of values) headers.append(key, value);
    else if (values) headers.set(key, values);
  }
  return headers;
}

async function send(res: Response, response: globalThis.Response) {
  // Admission control already answered 503 (the time limit passed): the late answer is dropped.
  if (res.headersSent) return void (await response.body?.cancel().catch(() => {}));
  res.statusMessage = response.statusText;
  res.status(response.status);
  // A route's header replaces the server-wide one of the same name (a shared board's Referrer-Policy, say); only
  // Set-Cookie may come more than once.
  for (const [key, value] of response.headers.entries()) {
    if (key === "set-cookie") res.append(key, value);
    else res.setHeader(key, value);
  }
  if (response.body) await writeBody(response.body, res);
  else res.end();
}

/**
 * A response body onto the socket at the pace the client takes it: at most one chunk is read ahead of a socket
 * that has no room (Remix's writeReadableStreamToWritable writes without waiting, so a download sent to a slow client
 * piled up in memory: a ZIP of 100 originals, all of it). A client that goes away cancels the body, so its source
 * stops too. After each chunk the compression middleware, when it compresses, is flushed as Remix's helper does,
 * so streamed HTML still goes out as it is rendered.
 */
export async function writeBody(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> {
  const reader = body.getReader();
  // The read ahead is awaited only once the socket has room: a source that fails meanwhile is answered then (the
  // catch here only keeps that failure from being an unhandled rejection while nobody waits on it).
  const readAhead = () => {
    const read = reader.read();
    read.catch(() => {});
    return read;
  };
  try {
    if (res.destroyed) return await reader.cancel();
    const first = await reader.read();
    if (first.done) return void res.end();
    // A body of one chunk (a JSON answer, a page rendered whole) ends the response with it: the compression
    // middleware then knows its length, and leaves one under its threshold (1 KB) as it is, rather than start a gzip
    // stream for a few bytes (~5 ms of the server's thread per upload's three answers, bench P6). A body whose next
    // chunk is not there by the next turn of the event loop (a streamed page) goes out as it comes.
    let next = readAhead();
    const turn = new Promise<false>((resolve) => setImmediate(() => resolve(false)));
    // A source that fails on its second chunk fails below, after its first chunk went out, as it always did.
    const ended = next.then(
      (r) => r.done,
      () => false,
    );
    if (await Promise.race([ended, turn])) return void res.end(first.value);
    for (let chunk: Uint8Array = first.value; ;) {
      if (res.destroyed) return await reader.cancel();
      const room = res.write(chunk);
      const flush = (res as ServerResponse & { flush?: () => void }).flush;
      if (typeof flush === "function") flush.call(res);
      if (!room && !(await drained(res))) return await reader.cancel();
      const { done, value } = await next;
      if (done) return void res.end();
      chunk = value;
      next = readAhead();
    }
  } catch (error) {
    res.destroy(error as Error);
    throw error;
  }
}

/**
 * true once the socket has room again, false when it closed first (or had closed already: while the next chunk was
 * being read, say, when its 'close' went by unheard); its listeners are removed either way.
 */
function drained(res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off("drain", onDrain);
      res.off("close", onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.once("drain", onDrain);
    res.once("close", onClose);
  });
}

export const MAX_BODY = 1024 * 1024;
/** A host name or address with an optional port: nothing that could carry a path or a query. */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i;
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** The public API (app/routes/api.v1+/): its problem documents, and the only place PATCH and DELETE are answered. */
export const PUBLIC_API = /^\/api\/v1(\/|$)/i;
const FORM = /^application\/x-www-form-urlencoded\b/i;
const MULTIPART = /^multipart\/form-data\b/i;
const JSON_TYPE = /^application\/json\b/i;

/** The paths whose bodies are file bytes, streamed by their own handlers with their own limits (images, CSV import). */
export const streamsItsBody = (req: Request) =>
  (req.method === "PUT" && req.path === "/storage/upload") ||
  (req.method === "POST" && /^\/(upload\/\d+\/(files|import)|api\/v1\/projects\/\d+\/files)$/i.test(req.path));

function refuse(req: Request, res: Response, log: WarnLog, status: number, message: string, headers: Record<string, string> = {}) {
  log.warn("request refused", {
    method: req.method,
    path: loggedPath(req.originalUrl),
    requestId: requestIdOf(req),
    status,
    reason: message,
  });
  res.set({ "Cache-Control": "no-store", ...headers });
  if (!res.headersSent) res.status(status);
  if (PUBLIC_API.test(req.path)) {
    res
      .type("application/problem+json")
      .send(JSON.stringify({ type: "about:blank", title: STATUS_CODES[status], status, detail: message }));
    if (!req.complete) req.resume();
    return;
  }
  const wantsJson = req.path.startsWith("/api/") || JSON_TYPE.test(req.get("content-type") ?? "") || /json/.test(req.get("accept") ?? "");
  if (wantsJson) res.json({ error: message });
  else res.type("text/plain").send(message);
  // A body left unread must not be parsed as the next request on this connection.
  if (!req.complete) req.resume();
}

type StatusError = Error & { status?: number };

function readBody(req: Request, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        reject(Object.assign(new Error("too large"), { status: 413 }));
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks, size)));
    req.on("error", (err: Error) => reject(Object.assign(err, { status: 400 })));
    req.on("aborted", () => reject(Object.assign(new Error("aborted"), { status: 400 })));
  });
}

/** `{ nulInField }` when the body parses as multipart form data (whether a text field holds a NUL), null when not. */
function parsesAsMultipart(headers: IncomingHttpHeaders, body: Buffer): Promise<{ nulInField: boolean } | null> {
  return new Promise((resolve) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers, limits: { fieldSize: MAX_BODY } });
    } catch {
      return resolve(null); // no boundary, or not multipart at all
    }
    let nulInField = false;
    parser.on("field", (name, value) => {
      if (name.includes(NUL) || value.includes(NUL)) nulInField = true;
    });
    parser.on("file", (_name, stream) => {
      stream.on("error", () => {});
      stream.resume();
    });
    parser.on("error", () => resolve(null));
    parser.on("close", () => resolve({ nulInField }));
    parser.end(body);
  });
}

/**
 * What the address says must decode: a path whose %-escapes are broken or not UTF-8 (`/client/%E0%A4%A`) would fail
 * deep in Remix's routing as a 500. A NUL anywhere (path or query) is refused too: no name, word or id holds one,
 * PostgreSQL cannot store one, and SQLite's LIKE stops at it (`/all-boards?q=%00` matched every board).
 */
function addressProblem(req: Request): string | null {
  try {
    decodeURIComponent(req.path);
  } catch {
    return "The address is malformed (a % escape that is not valid UTF-8).";
  }
  if (NUL_ESCAPE.test(req.originalUrl)) return "The address holds a NUL character.";
  return null;
}
const NUL_ESCAPE = /%00|\0/i;
const NUL = "\0";

/** Express middleware: method allowlist, address, body size, type and syntax. Sets `req.checkedBody` (a Buffer) for Remix. */
export function checkRequests(log: WarnLog): RequestHandler {
  return async (req, res, next) => {
    if (!METHODS.has(req.method)) return refuse(req, res, log, 405, "Method not allowed.", { Allow: [...METHODS].join(", ") });
    const badAddress = addressProblem(req);
    if (badAddress) return refuse(req, res, log, 400, badAddress);
    // Remix's data requests (`.data`) are the pages' business: the API answers its own addresses only.
    if (PUBLIC_API.test(req.path) && /\.data$/i.test(req.path)) return refuse(req, res, log, 404, "No such endpoint.");
    if (req.method === "PUT" && req.path !== "/storage/upload")
      return refuse(req, res, log, 405, "Method not allowed.", {
        Allow: PUBLIC_API.test(req.path) ? "GET, HEAD, POST, PATCH, DELETE" : "GET, HEAD, POST",
      });
    if ((req.method === "PATCH" || req.method === "DELETE") && !PUBLIC_API.test(req.path))
      return refuse(req, res, log, 405, "Method not allowed.", { Allow: "GET, HEAD, POST" });
    if (["GET", "HEAD", "OPTIONS"].includes(req.method) || streamsItsBody(req)) return next();
    const type = req.get("content-type") ?? "";
    const length = req.get("content-length");
    if (length === undefined && req.get("transfer-encoding")) return refuse(req, res, log, 411, "A Content-Length is required.");
    if (Number(length ?? 0) > MAX_BODY) return refuse(req, res, log, 413, "The request is too large.");
    let body: Buffer;
    try {
      body = await readBody(req, MAX_BODY);
    } catch (err) {
      const status = (err as StatusError).status ?? 400;
      return refuse(req, res, log, status, status === 413 ? "The request is too large." : "The request body could not be read.");
    }
    if (body.length) {
      // Text fields with a NUL are refused like an address with one; a file's bytes may hold any byte.
      const nulInField = "A field holds a NUL character.";
      if (MULTIPART.test(type)) {
        if (!/boundary=/i.test(type)) return refuse(req, res, log, 400, "The form data has no boundary.");
        const parsed = await parsesAsMultipart(req.headers, body);
        if (!parsed) return refuse(req, res, log, 400, "The form data is incomplete or malformed.");
        if (parsed.nulInField) return refuse(req, res, log, 400, nulInField);
      } else if (JSON_TYPE.test(type)) {
        let nul = false;
        try {
          JSON.parse(body.toString("utf8"), (_key, value) => {
            if (typeof value === "string" && value.includes(NUL)) nul = true;
            return value;
          });
        } catch {
          return refuse(req, res, log, 400, "Data format error");
        }
        if (nul) return refuse(req, res, log, 400, nulInField);
      } else if (FORM.test(type)) {
        if (NUL_ESCAPE.test(body.toString("latin1"))) return refuse(req, res, log, 400, nulInField);
      } else {
        return refuse(req, res, log, 415, "Send a form (application/x-www-form-urlencoded or multipart/form-data) or JSON.");
      }
    }
    req.checkedBody = body;
    next();
  };
}

/**
 * The Remix request handler (as @remix-run/express's, which cannot take a body already read: a checked body is
 * handed over as the bytes read, a streamed one as the stream).
 */
export function remixHandler({
  build,
  mode,
  getLoadContext,
}: {
  build: ServerBuild | (() => Promise<ServerBuild>);
  mode: "development" | "production";
  getLoadContext: (req: Request, res: Response) => AppLoadContext;
}) {
  const handle = createRequestHandler(build, mode);
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      // The Host header becomes part of the URL Remix routes by: a host with a path in it (`x/shared-board/…?`)
      // would make Remix render another page than the one asked for.
      const host = req.get("host") ?? "";
      if (!HOST.test(host)) return void res.status(400).type("text/plain").set("Cache-Control", "no-store").send("Bad Host header.");
      const url = new URL(`${req.protocol}://${host}${req.originalUrl}`);
      let controller: AbortController | null = new AbortController();
      res.on("finish", () => (controller = null));
      res.on("close", () => controller?.abort());
      const init: RequestInit & { duplex?: "half" } = { method: req.method, headers: headersOf(req), signal: controller.signal };
      if (req.method !== "GET" && req.method !== "HEAD") {
        init.body = (req.checkedBody ?? createReadableStreamFromReadable(req)) as BodyInit;
        init.duplex = "half";
      }
      const response = await handle(new globalThis.Request(url.href, init), getLoadContext(req, res));
      await send(res, response);
    } catch (error) {
      next(error);
    }
  };
}
