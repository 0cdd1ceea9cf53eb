import { remember } from "~/lib/bounded-cache";
import { thumbOfGridKey } from "~/lib/media";
import { claimObjects } from "~/models/objects.server";
import { gridThumbFrom } from "./image-files.server";
import { readObject, storage } from "./storage.server";

/**
 * Grid thumbnails (lib/media.ts) are made on ingest. An image stored before they were has none until its first
 * request for one, which makes it here from the image's thumbnail: no backfill pass over a large library, and no
 * image is ever shown without a picture. Access is checked by the caller, as for any object.
 */

/** Grid thumbnails this process has seen stored: each is checked (or made) once, not on every request. */
const stored = new Map<string, true>();
const STORED_MAX = 100_000;
/** One making per key at a time: the cards of one page ask for many keys at once, two people for the same key rarely. */
const making = new Map<string, Promise<boolean>>();
/** A thumbnail is ~10–40 KiB: anything much larger under a thumbnail's key is not read. */
const THUMB_MAX_BYTES = 4 * 1024 * 1024;

/** Whether the grid thumbnail `key` is stored, made first if its thumbnail is; false when neither is there. */
export function ensureGridThumb(key: string): Promise<boolean> {
  if (stored.has(key)) return Promise.resolve(true);
  const pending = making.get(key);
  if (pending) return pending;
  const made = makeIfMissing(key).finally(() => making.delete(key));
  making.set(key, made);
  return made;
}

async function makeIfMissing(key: string) {
  const thumbKey = thumbOfGridKey(key);
  if (!thumbKey) return false;
  const store = storage();
  if ((await store.size(key)) === null) {
    const thumb = await readObject(store, thumbKey, THUMB_MAX_BYTES);
    if (!thumb) return false;
    // Claimed like any derivative (objects.server.ts), so a purge of the image's objects takes it too.
    await claimObjects(checksumOfKey(key), [key]);
    await store.put(key, await gridThumbFrom(thumb.bytes));
  }
  remember(stored, key, true, STORED_MAX);
  return true;
}

/** The checksum a derivative's key embeds: `thumbs/ab/cd/<checksum>[-variant].webp`. */
const checksumOfKey = (key: string) => key.slice(key.lastIndexOf("/") + 1).split(/[-.]/)[0]!;
