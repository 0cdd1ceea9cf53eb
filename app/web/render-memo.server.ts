import { createHash } from "node:crypto";
import type { EntryContext } from "@remix-run/node";
import { config } from "~/config.server";
import { remember } from "../lib/bounded-cache";
import { metrics } from "../lib/metrics.server";
import { PageCache, piecesOf, withNonce } from "../lib/page-cache.server";

/**
 * Memoized renders (docs/decisions/0018). A page's HTML is a pure function of its URL and of what its loaders
 * returned: no component reads the clock, the request or anything random (the nonce is kept apart). So once the
 * loaders have run — every time: access, then fresh data — a page whose URL and serialized data are those of a page
 * this visitor was sent before is answered with that page's HTML, its nonce replaced, instead of rendering its two
 * thousand elements again. The key is a hash of the URL, the very bytes the browser receives as the page's data, and
 * the request's cookies: a change of any value is another key, and nothing is shared between sessions, not even a
 * page that would be the same (a hit cannot tell anyone what someone else looked at). A page is kept the second time
 * its key is seen: one seen once (a page whose data holds the time, a URL never asked again) is rendered and sent,
 * and never pushes a page that repeats out of the memo.
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
/** Data a loader deferred (a promise anywhere in what it returned) comes in later: such a page is never kept. */
function defers(value: unknown, depth = 0): boolean {
  if (isThenable(value)) return true;
  if (value === null || typeof value !== "object" || depth > 8) return false;
  return Object.values(value).some((v) => defers(v, depth + 1));
}

/** Only a visitor's GET of a page that rendered its data, as it is: no action's answer, no error, nothing deferred. */
export function memoizable(request: Request, status: number, context: EntryContext, nonce: string): boolean {
  const { actionData, errors, loaderData } = context.staticHandlerContext;
  return (
    cache() !== null &&
    request.method === "GET" &&
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

/** Keys seen once, not kept yet (a key's hash, 44 bytes each). */
const seen = new Map<string, true>();
const MAX_SEEN = 20_000;

export interface Memo {
  /** The earlier render's page with this request's nonce, or null. */
  hit: { body: Buffer[]; length: number } | null;
  /** Keeps this request's render for the next one; null when the page was not seen before (render it, keep nothing). */
  keep: ((html: string, nonce: string) => void) | null;
}

/** Looks the page up by status, URL, cookies and data. */
export async function lookUp(request: Request, status: number, context: EntryContext, nonce: string): Promise<Memo> {
  const hash = createHash("sha256").update(`${status} ${request.url}\n${request.headers.get("Cookie")}\n`);
  for (const chunk of await takeData(context)) hash.update(chunk);
  const key = hash.digest("base64");
  const entry = cache()!.get(key, "");
  metrics().renderMemo.inc({ result: entry ? "hit" : "miss" });
  if (entry) return { hit: withNonce(entry.parts, nonce), keep: null };
  if (!seen.delete(key)) {
    remember(seen, key, true, MAX_SEEN);
    return { hit: null, keep: null };
  }
  return {
    hit: null,
    keep(html, renderNonce) {
      const { parts, bytes } = piecesOf(html, renderNonce);
      cache()!.set(key, { version: "", parts, headers: {}, bytes: bytes + key.length });
    },
  };
}
