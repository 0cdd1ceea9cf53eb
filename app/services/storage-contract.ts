import type { Readable } from "node:stream";

/**
 * Object storage. Keys are made by the server (content hashes, or random ids for uploads),
 * never taken from file names. Two drivers: FileStorage (default) and S3Storage.
 */
export interface Storage {
  put(key: string, body: Buffer): Promise<void>;
  /**
   * Streams bytes to a key, refusing (and keeping nothing) past maxBytes with ObjectTooLarge. Memory stays bounded
   * whatever the size: the file driver writes as it reads, S3 sends parts of a multipart upload.
   */
  putStream(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<void>;
  /** `etag` names the version read (S3's ETag), for a copy conditional on it; the file driver has none. */
  get(key: string): Promise<{ stream: Readable; size: number; etag?: string } | null>;
  /**
   * Where a driver reads a whole object better than through `get`'s stream (the file driver: into one buffer):
   * `readObject` (storage.server.ts) uses it, with the same answers (null when there is none, ObjectTooLarge past
   * maxBytes).
   */
  read?(key: string, maxBytes: number): Promise<{ bytes: Buffer; etag?: string } | null>;
  /** The object's size in bytes, or null when there is none. */
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /**
   * Only where the bytes need not pass through the app (S3's CopyObject); the file driver has it not, since its
   * caller holds the bytes anyway. Copies `fromKey` to `toKey` only while `fromKey` is still the version `ifMatch`
   * names, and only if the copy's SHA-256 is `sha256` where the store reports one; otherwise throws SourceChanged and
   * leaves nothing under `toKey`. A browser can rewrite an upload key until its URL expires: the caller checked one
   * version's bytes, and no other version may reach a content-addressed key.
   */
  copy?(fromKey: string, toKey: string, opts: { ifMatch: string; sha256: string }): Promise<void>;
  /**
   * A URL the browser may PUT the object's bytes to until `expiresInSeconds` pass. S3 cannot cap the size of a
   * presigned PUT, so registration always checks the stored object again.
   */
  signUpload(key: string, opts: { maxBytes: number; expiresInSeconds: number; exactBytes?: number }): Promise<string>;
  /**
   * S3 only: a GET URL of the object valid from `signedAt` for `expiresInSeconds`, answering with the given type and
   * caching rule (media offload, web/media.server.ts). The same arguments give the same URL.
   */
  presignedGet?(
    key: string,
    opts: { signedAt: Date; expiresInSeconds: number; contentType: string; cacheControl: string },
  ): Promise<string>;
  /** Throws unless the store answers (and, for files, can be written): the readiness check's question. */
  ping(): Promise<void>;
}

export class ObjectTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`The object is larger than ${maxBytes} bytes`);
    this.name = "ObjectTooLarge";
  }
}

/** A copy's source is gone or is no longer the version that was read: the caller stores the bytes it checked. */
export class SourceChanged extends Error {
  constructor(key: string) {
    super(`The object changed or is gone since it was read: ${key}`);
    this.name = "SourceChanged";
  }
}
