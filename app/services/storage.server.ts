import { createReadStream } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { config } from "~/config.server";
import { randomToken } from "~/lib/crypto.server";

/** Object storage. Keys are made by the server (content hashes), never taken from file names. */
export interface Storage {
  put(key: string, body: Buffer): Promise<void>;
  get(key: string): Promise<{ stream: Readable; size: number } | null>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
}

const KEY = /^[a-z]+\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}(-[a-z0-9]+)?\.[a-z0-9]+$/;
export const isValidKey = (key: string) => KEY.test(key);

/** `originals/ab/cd/<sha256>.jpg`: sharded so no folder grows huge. */
export function objectKey(kind: "originals" | "thumbs" | "previews", hash: string, ext: string, variant?: string) {
  return `${kind}/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}${variant ? `-${variant}` : ""}.${ext}`;
}

export class FileStorage implements Storage {
  constructor(private root: string) {}

  private file(key: string) {
    if (!isValidKey(key)) throw new Error("Invalid storage key");
    return path.join(this.root, key);
  }

  /** Written to a temporary file and renamed, so a crash never leaves a half-written object under its key. */
  async put(key: string, body: Buffer) {
    const file = this.file(key);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomToken(6)}.tmp`;
    await writeFile(tmp, body, { flush: true });
    await rename(tmp, file);
  }

  async get(key: string) {
    const file = this.file(key);
    try {
      const s = await stat(file);
      return { stream: createReadStream(file), size: s.size };
    } catch {
      return null;
    }
  }

  async exists(key: string) {
    try {
      await stat(this.file(key));
      return true;
    } catch {
      return false;
    }
  }

  async delete(key: string) {
    await rm(this.file(key), { force: true });
  }
}

let current: Storage | undefined;
export function storage(): Storage {
  return (current ??= new FileStorage(path.join(config().dataDir, "objects")));
}
export function useStorage(next: Storage | undefined) {
  current = next;
}
