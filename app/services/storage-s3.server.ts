import {
  CopyObjectCommand,
  HeadBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NotFound,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { Readable } from "node:stream";
import { getErrorMessage } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { ObjectTooLarge, SourceChanged, type Storage } from "./storage-contract";

export interface S3Config {
  bucket: string;
  region: string;
  /** For S3-compatible servers (MinIO, Ceph, s3rver …); unset for AWS. */
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

const status = (err: unknown) => (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
const missing = (err: unknown) => err instanceof NoSuchKey || err instanceof NotFound || status(err) === 404;

/**
 * A streamed upload holds at most (queue + 1) parts in memory: the parts being sent and the one being filled. 8 MiB
 * parts (S3's minimum is 5) keep a 200 MB original to 25 requests; a body of one part or less is a single PutObject.
 */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

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

  /**
   * A multipart upload fed as the body arrives. Past maxBytes the body fails, the upload is aborted (its parts
   * deleted) and nothing is completed under the key. Should the abort itself fail, the parts stay until the bucket's
   * lifecycle rule for incomplete multipart uploads removes them (docs/operations.md); nothing is visible under the key.
   */
  async putStream(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number) {
    let over = false;
    async function* capped() {
      let total = 0;
      for await (const chunk of body) {
        total += chunk.length;
        if (total > maxBytes) {
          over = true;
          throw new ObjectTooLarge(maxBytes);
        }
        yield chunk;
      }
    }
    // One chunk read ahead, not Readable.from's sixteen: the parts are the buffer.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: Readable.from(capped(), { highWaterMark: 1 }) },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
    });
    try {
      await upload.done();
    } catch (err) {
      if (!over) throw err;
      if (!(err instanceof ObjectTooLarge)) log.warn("refused multipart upload not aborted", { key, error: getErrorMessage(err) });
      throw new ObjectTooLarge(maxBytes);
    }
  }

  async get(key: string) {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { stream: out.Body as Readable, size: out.ContentLength ?? 0, etag: out.ETag };
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

  /**
   * A server-side copy: the bytes do not pass through the app. Conditional on the version read (CopySourceIfMatch),
   * and, since an ETag is an MD5 (for which collisions can be made), checked against the SHA-256 the store computes
   * for the copy where it reports one (S3 does; s3rver and some others do not, and then the copy's ETag must be the
   * one read).
   */
  async copy(fromKey: string, toKey: string, opts: { ifMatch: string; sha256: string }) {
    let result;
    try {
      const out = await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: toKey,
          CopySource: `${this.bucket}/${fromKey}`, // keys are [a-z0-9/.-] (isValidKey): nothing to encode
          CopySourceIfMatch: opts.ifMatch,
          ChecksumAlgorithm: "SHA256",
          // The uploader chose the upload's Content-Type and Content-Encoding (a presigned PUT does not sign them):
          // the copy keeps none of its metadata, as a PUT of the bytes would not.
          MetadataDirective: "REPLACE",
        }),
      );
      result = out.CopyObjectResult;
    } catch (err) {
      if (missing(err) || status(err) === 412) throw new SourceChanged(fromKey);
      throw err;
    }
    // What was copied must be what was read: by its SHA-256 where the store reports one, else by the copy's ETag
    // (the MD5 of a single-part object), for a store that ignores the copy's condition (s3rver does). Neither
    // reported: nothing shows what landed, so it is not kept.
    const reported = result?.ChecksumType === "COMPOSITE" ? undefined : result?.ChecksumSHA256;
    const same = reported ? reported === Buffer.from(opts.sha256, "hex").toString("base64") : result?.ETag === opts.ifMatch;
    if (!same) {
      await this.delete(toKey);
      throw new SourceChanged(fromKey);
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
