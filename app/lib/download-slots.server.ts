import type { Readable } from "node:stream";
import { config } from "~/config.server";
import { TooManyRequestsError } from "./errors";

/**
 * Downloads running at once (ZIPs, CSV files, originals, attribute exports). A download's body goes at its client's
 * pace and no longer holds an admission place once its headers are sent (server/admission.mjs), so these limits
 * are what bound them: in all, per client (a signed-in person, or an address for a share link's visitors) and per
 * share link. A download past a limit is refused with 429 before any work is done; its place is given back when
 * its body ends, fails or is cancelled (the client went away, or was cut by RESPONSE_IDLE_SECONDS). The counts are
 * this process's: each instance bounds its own sockets and open files.
 */
export const TOO_MANY_DOWNLOADS = "Too many downloads at once. Please wait for one to finish, then try again.";
const RETRY_AFTER_SECONDS = 5;

export interface DownloadOwner {
  /** `user:<id>` for a signed-in person, `ip:<address>` for a share link's visitor. */
  client: string;
  /** `link:<id>` for a share link's download. */
  link?: string;
}

const running = new Map<string, number>();
let total = 0;

/** Takes a place for one download or throws 429; the function it returns gives the place back (once, however often called). */
export function takeDownloadSlot(owner: DownloadOwner): () => void {
  const limits = config().downloads;
  const keys = [owner.client, ...(owner.link ? [owner.link] : [])];
  const limitOf = (key: string) => (key.startsWith("link:") ? limits.perLink : limits.perClient);
  if (total >= limits.total || keys.some((key) => (running.get(key) ?? 0) >= limitOf(key)))
    throw new TooManyRequestsError(TOO_MANY_DOWNLOADS, RETRY_AFTER_SECONDS);
  total += 1;
  for (const key of keys) running.set(key, (running.get(key) ?? 0) + 1);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    total -= 1;
    for (const key of keys) {
      const left = (running.get(key) ?? 1) - 1;
      if (left > 0) running.set(key, left);
      else running.delete(key);
    }
  };
}

/**
 * Runs `make` holding a download place: the response's body gives the place back when it is done with, or when the
 * client goes away before reading it (Remix then drops the answer without cancelling its body, which would hold the
 * place and the open file for good); a failure before there gives it back at once. A HEAD request takes no place,
 * and the body `make` opened is closed at once (Remix sends none and would leave it open).
 */
export async function asDownload(request: Request, owner: DownloadOwner, make: () => Promise<Response>): Promise<Response> {
  if (request.method === "HEAD") {
    const response = await make();
    await response.body?.cancel();
    return new Response(null, response);
  }
  const release = takeDownloadSlot(owner);
  try {
    const response = await make();
    if (!response.body) {
      release();
      return response;
    }
    const body = releasing(response.body, release);
    const gone = () => {
      release();
      // Unread: closes the source. Being read already (locked): the sending side cancels it as the socket closes.
      if (!body.locked) void body.cancel().catch(() => {});
    };
    if (request.signal.aborted) gone();
    else request.signal.addEventListener("abort", gone, { once: true });
    return new Response(body, response);
  } catch (error) {
    release();
    throw error;
  }
}

/** The same bytes, pulled one chunk at a time; `release` runs when the stream ends, fails or is cancelled. */
function releasing(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            release();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          release();
          controller.error(error);
        }
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** The same for a Node stream (the media routes, answered by Express): the place is given back when it closes. */
export function releasingNodeStream(stream: Readable, release: () => void): Readable {
  stream.once("close", release);
  return stream;
}

/** The places held now, for tests and metrics. */
export const downloadsRunning = () => ({ total, byKey: Object.fromEntries(running) });
