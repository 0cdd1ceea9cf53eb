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
  get(key: string): Promise<{ stream: Readable; size: number } | null>;
  /** The object's size in bytes, or null when there is none. */
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /**
   * A URL the browser may PUT the object's bytes to until `expiresInSeconds` pass. S3 cannot cap the size of a
   * presigned PUT, so registration always checks the stored object again.
   */
  signUpload(key: string, opts: { maxBytes: number; expiresInSeconds: number; exactBytes?: number }): Promise<string>;
  /** Throws unless the store answers (and, for files, can be written): the readiness check's question. */
  ping(): Promise<void>;
}

export class ObjectTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`The object is larger than ${maxBytes} bytes`);
    this.name = "ObjectTooLarge";
  }
}
