import { createHash } from "node:crypto";
import type { EntryContext } from "@remix-run/node";
import { config } from "~/config.server";
import { PageCache, piecesOf, withNonce } from "./page-cache.server";

/**
 * Memoized renders (docs/decisions/0018). A page's HTML is a pure function of its URL and of what its loaders
 * returned: no component reads the clock, the request or anything random (the nonce is kept apart). So once the
 * loaders have run — every time: access, then fresh data — a page whose URL and serialized data are those of a page
 * this visitor was sent before is answered with that page's HTML, its nonce replaced, instead of rendering its two
 * thousand elements again. The key is a hash of the URL, the very bytes the browser receives as the page's data, and
 * the request's cookies: a change of any value is another key, and nothing is shared between sessions, not even a
 * page that would be the same (a hit cannot tell anyone what someone else looked at).
 */

let memo: PageCache | null | undefined;
const cache = () => {
  if (memo === undefined) {
    const bytes = config().renderCacheMb * 1024 * 1024;
    memo = bytes > 0 ? new PageCache(10_000, bytes) : null;
  }
  return memo;
};

const isThenable = (value: unknown) => typeof (value as PromiseLike<unknown> | null)?.then === "function";
/** Data a loader deferred (a promise in its object) streams in later: such a page is rendered as it streams. */
const defers = (loaderData: Record<string, unknown>) =>
  Object.values(loaderData).some((data) => data !== null && typeof data === "object" && Object.values(data).some(isThenable));

/** Only a visitor's GET of a page that rendered its data, as it is: no action's answer, no error, nothing deferred. */
export function memoizable(request: Request, status: number, context: EntryContext, nonce: string): boolean {
  const { actionData, errors, loaderData } = context.staticHandlerContext;
  return (
    cache() !== null &&
    (request.method === "GET" || request.method === "HEAD") &&
    status === 200 &&
    nonce !== "" &&
    request.headers.has("Cookie") &&
    !actionData &&
    !errors &&
    !defers(loaderData) &&
    context.serverHandoffStream !== undefined
  );
}

/** The page's data as Remix serialized it, read whole; the render then reads it from the copy this puts back. */
async function takeData(context: EntryContext): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  const reader = context.serverHandoffStream!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(typeof value === "string" ? Buffer.from(value) : value);
  }
  context.serverHandoffStream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return chunks;
}

export interface Memo {
  /** The earlier render's page with this request's nonce, or null. */
  hit: { body: Buffer[]; length: number } | null;
  /** Keeps this request's render for the next one. */
  keep(html: string, nonce: string): void;
}

/** Looks the page up by status, URL, cookies and data. */
export async function lookUp(request: Request, status: number, context: EntryContext, nonce: string): Promise<Memo> {
  const hash = createHash("sha256").update(`${status} ${request.url}\n${request.headers.get("Cookie")}\n`);
  for (const chunk of await takeData(context)) hash.update(chunk);
  const key = hash.digest("base64");
  const entry = cache()!.get(key, "");
  return {
    hit: entry ? withNonce(entry.parts, nonce) : null,
    keep(html, renderNonce) {
      const { parts, bytes } = piecesOf(html, renderNonce);
      cache()!.set(key, { version: "", parts, headers: {}, bytes: bytes + key.length });
    },
  };
}
