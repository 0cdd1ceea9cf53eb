import {
  HeadBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NotFound,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { Readable } from "node:stream";
import { ObjectTooLarge, type Storage } from "./storage-contract";

export interface S3Config {
  bucket: string;
  region: string;
  /** For S3-compatible servers (MinIO, Ceph, s3rver …); unset for AWS. */
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

const missing = (err: unknown) =>
  err instanceof NoSuchKey ||
  err instanceof NotFound ||
  (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode === 404;

/**
 * S3-compatible object storage. By default downloads are streamed through the app rather than redirected to
 * presigned GET URLs: the browser never talks to a third-party host (locked-down corporate proxies block them) and
 * the immutable caching headers stay ours (decision 0007). MEDIA_OFFLOAD=presigned redirects instead, where the
 * network allows it.
 */
export class S3Storage implements Storage {
  private client: S3Client;
  private bucket: string;

  constructor(cfg: S3Config) {
    this.bucket = cfg.bucket;
    this.client = new S3Client({
      region: cfg.region,
      endpoint: cfg.endpoint,
      forcePathStyle: cfg.forcePathStyle,
      credentials:
        cfg.accessKeyId && cfg.secretAccessKey ? { accessKeyId: cfg.accessKeyId, secretAccessKey: cfg.secretAccessKey } : undefined,
      // Checksums only where S3 requires them: S3-compatible servers vary in what they accept, and a presigned
      // PUT must not demand a checksum header the browser does not send.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  async put(key: string, body: Buffer) {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length }));
  }

  /** Buffered up to maxBytes (at most MAX_IMAGE_BYTES), then one PUT: simpler than a multipart upload. */
  async putStream(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number) {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of body) {
      total += chunk.length;
      if (total > maxBytes) throw new ObjectTooLarge(maxBytes);
      chunks.push(Buffer.from(chunk));
    }
    await this.put(key, Buffer.concat(chunks, total));
  }

  async get(key: string) {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { stream: out.Body as Readable, size: out.ContentLength ?? 0 };
    } catch (err) {
      if (missing(err)) return null;
      throw err;
    }
  }

  async size(key: string) {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return out.ContentLength ?? 0;
    } catch (err) {
      if (missing(err)) return null;
      throw err;
    }
  }

  /** The bucket answers a HEAD (and the credentials are good). */
  async ping() {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async delete(key: string) {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /**
   * With the file's size known (the browser says it), the size is signed: S3 then refuses a PUT of any other
   * length. Registration checks the stored object's size regardless.
   */
  async signUpload(key: string, opts: { maxBytes: number; expiresInSeconds: number; exactBytes?: number }) {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ...(opts.exactBytes !== undefined ? { ContentLength: opts.exactBytes } : {}),
    });
    return getSignedUrl(this.client, command, { expiresIn: opts.expiresInSeconds, signableHeaders: new Set(["content-length"]) });
  }

  async presignedGet(key: string, opts: { signedAt: Date; expiresInSeconds: number; contentType: string; cacheControl: string }) {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentType: opts.contentType,
      ResponseCacheControl: opts.cacheControl,
    });
    return getSignedUrl(this.client, command, { expiresIn: opts.expiresInSeconds, signingDate: opts.signedAt });
  }

  destroy() {
    this.client.destroy();
  }
}
