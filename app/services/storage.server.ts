import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { type FileHandle, mkdir, open, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { config } from "~/config.server";
import { hmac, randomToken, safeEqual } from "~/lib/crypto.server";
import { S3Storage } from "./storage-s3.server";
import { ObjectTooLarge, type Storage } from "./storage-contract";

// Up to two variants after the hash: a rotation's, then a size's (a rotated image's grid thumbnail: `-r90-w240`).
const KEY = /^[a-z]+\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}(-[a-z0-9]+){0,2}\.[a-z0-9]+$/;
export const isValidKey = (key: string) => KEY.test(key);

/** `originals/ab/cd/<sha256>.jpg`: sharded so no folder grows huge. */
export function objectKey(
  kind: "originals" | "thumbs" | "previews" | "uploads" | "exports" | "logos",
  hash: string,
  ext: string,
  variant?: string,
) {
  return `${kind}/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}${variant ? `-${variant}` : ""}.${ext}`;
}

/** Where a browser's bytes wait until registration: a random key, unrelated to the file's name. */
export const newUploadKey = () => objectKey("uploads", randomBytes(32).toString("hex"), "upload");
export const isUploadKey = (key: string) => isValidKey(key) && key.startsWith("uploads/");

/**
 * Reads a whole object, refusing (without reading further) one larger than maxBytes. `etag` names the version read,
 * where the store has versions (S3), for a copy conditional on it (Storage.copy).
 */
export async function readObject(store: Storage, key: string, maxBytes: number): Promise<{ bytes: Buffer; etag?: string } | null> {
  if (store.read) return store.read(key, maxBytes);
  const found = await store.get(key);
  if (!found) return null;
  if (found.size > maxBytes) {
    found.stream.destroy();
    throw new ObjectTooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of found.stream as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      found.stream.destroy();
      throw new ObjectTooLarge(maxBytes);
    }
    chunks.push(chunk);
  }
  return { bytes: Buffer.concat(chunks, total), etag: found.etag };
}

/**
 * The default driver: files under DATA_DIR/objects. Its signed upload URLs are served by the app itself
 * (`PUT /storage/upload`), HMAC-signed over key, size limit and expiry, so the browser's flow is the same as with S3.
 */
export class FileStorage implements Storage {
  private signingKey: string;
  constructor(
    private root: string,
    secret: string,
  ) {
    this.signingKey = hmac(secret, "koala upload urls");
  }

  private file(key: string) {
    if (!isValidKey(key)) throw new Error("Invalid storage key");
    return path.join(this.root, key);
  }

  /** Written to a temporary file and renamed, so a crash never leaves a half-written object under its key. */
  async put(key: string, body: Buffer) {
    await this.write(key, async (tmp) => writeFile(tmp, body, { flush: true }));
  }

  /** Temporary files live in one folder (same file system, so the rename is atomic) that housekeeping can sweep. */
  private get tmpDir() {
    return path.join(this.root, ".tmp");
  }

  private async write(key: string, fill: (tmp: string) => Promise<void>) {
    const file = this.file(key);
    await mkdir(path.dirname(file), { recursive: true });
    await mkdir(this.tmpDir, { recursive: true });
    const tmp = path.join(this.tmpDir, `${randomToken(12)}.tmp`);
    try {
      await fill(tmp);
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /**
   * The whole file read straight into one buffer of its size: no stream's chunks copied together after (a 4 MB
   * original cost the server's thread 3–11 ms that way, under 1 ms this way; bench P6). An object is never rewritten
   * in place (put renames), so the size read first is the object's.
   */
  async read(key: string, maxBytes: number) {
    const file = this.file(key);
    let handle: FileHandle;
    try {
      handle = await open(file, "r");
    } catch (err) {
      // Only a file that is not there is none; running out of descriptors, say, is an error.
      if (["ENOENT", "ENOTDIR"].includes((err as NodeJS.ErrnoException).code ?? "")) return null;
      throw err;
    }
    try {
      const { size } = await handle.stat();
      if (size > maxBytes) throw new ObjectTooLarge(maxBytes);
      const bytes = Buffer.allocUnsafeSlow(size);
      let filled = 0;
      while (filled < size) {
        const { bytesRead } = await handle.read(bytes, filled, size - filled, filled);
        if (!bytesRead) break;
        filled += bytesRead;
      }
      return { bytes: filled === size ? bytes : bytes.subarray(0, filled) };
    } finally {
      await handle.close();
    }
  }

  async get(key: string) {
    const file = this.file(key);
    try {
      const s = await stat(file);
      // Large files in chunks of up to 1 MiB rather than 64 KiB: a ZIP of 100 originals then passes 16× fewer chunks
      // (and their promises and buffers) through the streams to the socket, and the server's memory stays flat.
      const chunk = Math.max(64 * 1024, Math.min(s.size, 1024 * 1024));
      return { stream: createReadStream(file, { highWaterMark: chunk }), size: s.size };
    } catch {
      return null;
    }
  }

  async size(key: string) {
    try {
      return (await stat(this.file(key))).size;
    } catch {
      return null;
    }
  }

  async delete(key: string) {
    await rm(this.file(key), { force: true });
  }

  /** A probe file written and removed where temporary files go: the volume is there and writable. */
  async ping() {
    await mkdir(this.tmpDir, { recursive: true });
    const probe = path.join(this.tmpDir, `ready-${randomToken(6)}.tmp`);
    await writeFile(probe, "");
    await rm(probe, { force: true });
  }

  async signUpload(key: string, opts: { maxBytes: number; expiresInSeconds: number; exactBytes?: number }) {
    this.file(key);
    const exp = Math.floor(Date.now() / 1000) + opts.expiresInSeconds;
    const query = new URLSearchParams({ key, max: String(opts.exactBytes ?? opts.maxBytes), exp: String(exp) });
    query.set("sig", hmac(this.signingKey, query.toString()));
    return `/storage/upload?${query}`;
  }

  /**
   * Housekeeping: temporary files older than `olderThanMs` (a write interrupted by a crash leaves one; an aborted
   * or failed write removes its own at once). Returns how many were removed.
   */
  async sweepTemporaryFiles(olderThanMs = 60 * 60_000): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.tmpDir);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      const file = path.join(this.tmpDir, name);
      const info = await stat(file).catch(() => null);
      if (info && Date.now() - info.mtimeMs > olderThanMs) {
        await rm(file, { force: true });
        removed += 1;
      }
    }
    return removed;
  }

  /** The key and size limit of a signed upload URL's query, or why it is refused. */
  verifyUpload(query: URLSearchParams): { key: string; maxBytes: number } | { error: string } {
    const key = query.get("key") ?? "";
    const max = Number(query.get("max"));
    const exp = Number(query.get("exp"));
    const signed = new URLSearchParams({ key, max: query.get("max") ?? "", exp: query.get("exp") ?? "" });
    if (!isUploadKey(key) || !safeEqual(hmac(this.signingKey, signed.toString()), query.get("sig") ?? ""))
      return { error: "The upload URL's signature is not valid." };
    if (!Number.isSafeInteger(exp) || exp * 1000 < Date.now()) return { error: "The upload URL has expired." };
    if (!Number.isSafeInteger(max) || max < 1) return { error: "The upload URL's signature is not valid." };
    return { key, maxBytes: max };
  }

  /**
   * The body's chunks are written a mebibyte at a time, gathered (writev, no copy): a request's body comes in
   * chunks of 64 KiB, and a write per chunk cost the server's thread ~15 ms per 4 MB upload (bench P6).
   */
  async putStream(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number) {
    await this.write(key, async (tmp) => {
      const handle = await open(tmp, "wx");
      try {
        let total = 0;
        let batch: Uint8Array[] = [];
        let batched = 0;
        const flush = async () => {
          await writeAll(handle, batch, batched);
          batch = [];
          batched = 0;
        };
        for await (const chunk of body) {
          total += chunk.length;
          if (total > maxBytes) throw new ObjectTooLarge(maxBytes);
          batch.push(chunk);
          batched += chunk.length;
          if (batched >= WRITE_BATCH) await flush();
        }
        await flush();
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
  }
}

const WRITE_BATCH = 1024 * 1024;

/** Chunks written in one gathered write, and what a short write left written after it. */
async function writeAll(handle: FileHandle, chunks: Uint8Array[], length: number) {
  if (!length) return;
  const { bytesWritten } = await handle.writev(chunks);
  if (bytesWritten < length) {
    const rest = Buffer.concat(chunks).subarray(bytesWritten);
    for (let at = 0; at < rest.length;) at += (await handle.write(rest, at)).bytesWritten;
  }
}

let current: Storage | undefined;
/** The configured driver: S3 when S3_BUCKET is set, otherwise files under DATA_DIR. */
export function storage(): Storage {
  if (current) return current;
  const cfg = config();
  return (current = cfg.s3 ? new S3Storage(cfg.s3) : new FileStorage(path.join(cfg.dataDir, "objects"), cfg.sessionSecret));
}

export function setStorage(next: Storage | undefined) {
  current = next;
}
