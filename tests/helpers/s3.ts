import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { readdir, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import S3rver from "s3rver";
import { S3Storage } from "~/services/storage-s3.server";

const ACCESS_KEY = "S3RVER";
const SECRET_KEY = "S3RVER";

/** A request as the front saw it, with the status it answered: what the tests assert the driver sent. */
export interface S3Request {
  method: string;
  path: string;
  query: URLSearchParams;
  copySource?: string;
  status?: number;
}

/**
 * A real S3-compatible server (s3rver) on loopback, with one bucket, for the S3 driver's tests.
 *
 * s3rver does not check request signatures. So it sits behind a small front on loopback (the endpoint the
 * tests and the app use) that checks presigned requests the way S3 does — the AWS Signature Version 4 over
 * the method, path, query and every signed header as actually sent, and the URL's expiry — and answers 403
 * SignatureDoesNotMatch / AccessDenied otherwise. What is NOT checked: requests signed in the Authorization
 * header (the SDK's own calls from the server, passed through unchecked), and the payload hash (presigned
 * uploads are UNSIGNED-PAYLOAD, as on S3).
 *
 * s3rver 3.7.1 also lacks three things S3 does and the driver relies on, which the front adds over s3rver's own
 * files and answers (see `amend`): AbortMultipartUpload (s3rver answers 405 and keeps the parts), a copy's
 * `x-amz-copy-source-if-match` (s3rver copies regardless) and a copy's SHA-256 (`x-amz-checksum-algorithm`).
 */
export async function startS3(): Promise<{
  endpoint: string;
  bucket: string;
  env: Record<string, string>;
  storage: () => S3Storage;
  /** Every request the front received, oldest first. */
  requests: S3Request[];
  /** The keys of multipart uploads begun and neither completed nor aborted (s3rver has no ListMultipartUploads). */
  multipartUploads(): Promise<string[]>;
  /**
   * True (the default): copies are answered as S3 does (their condition, their SHA-256). False: as s3rver and some
   * other stores do, the condition ignored and no checksum reported.
   */
  copiesLikeS3: boolean;
  stop(): Promise<void>;
}> {
  const directory = mkdtempSync(path.join(tmpdir(), "koala-s3-"));
  const bucket = "koala-test";
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port: backendPort } = (await server.run()) as { port: number };
  // Where s3rver keeps the parts of a multipart upload: <bucket>/._S3rver_uploads/<uploadId>/ (with a `key` file).
  const uploadsDir = path.join(directory, bucket, "._S3rver_uploads");
  const requests: S3Request[] = [];
  const settings = { copiesLikeS3: true };

  const forward = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const upstream = http.request(
      { host: "127.0.0.1", port: backendPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  };
  const backend = (method: string, objectPath: string) =>
    new Promise<{ status: number; etag?: string; body: Buffer }>((resolve, reject) => {
      const r = http.request({ host: "127.0.0.1", port: backendPort, method, path: objectPath }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.on("end", () => resolve({ status: answer.statusCode ?? 502, etag: answer.headers.etag, body: Buffer.concat(chunks) }));
      });
      r.on("error", reject);
      r.end();
    });
  const fail = (res: http.ServerResponse, status: number, code: string) => {
    res.writeHead(status, { "Content-Type": "application/xml" });
    res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code></Error>`);
  };
  const unquote = (etag = "") => etag.replace(/^W\//, "").replace(/"/g, "");

  /** What S3 does and s3rver does not; true when the request was answered here. */
  async function amend(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<boolean> {
    const uploadId = url.searchParams.get("uploadId");
    if (req.method === "DELETE" && uploadId) {
      req.resume();
      const dir = path.join(uploadsDir, path.basename(uploadId));
      if (!existsSync(dir)) fail(res, 404, "NoSuchUpload");
      else {
        await rm(dir, { recursive: true, force: true });
        res.writeHead(204).end();
      }
      return true;
    }
    const copySource = req.headers["x-amz-copy-source"];
    if (req.method !== "PUT" || typeof copySource !== "string" || uploadId) return false;
    const source = `/${decodeURIComponent(copySource).replace(/^\//, "")}`;
    if (!settings.copiesLikeS3) return false;
    const ifMatch = req.headers["x-amz-copy-source-if-match"];
    if (typeof ifMatch === "string") {
      const head = await backend("HEAD", source);
      if (head.status === 200 && unquote(head.etag) !== unquote(ifMatch)) {
        req.resume();
        fail(res, 412, "PreconditionFailed");
        return true;
      }
    }
    if (req.headers["x-amz-checksum-algorithm"] !== "SHA256") return false;
    const copied = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = http.request({ host: "127.0.0.1", port: backendPort, method: "PUT", path: req.url, headers: req.headers }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.on("end", () => resolve({ status: answer.statusCode ?? 502, body: Buffer.concat(chunks).toString() }));
      });
      r.on("error", reject);
      req.pipe(r);
    });
    let body = copied.body;
    if (copied.status === 200) {
      const object = await backend("GET", url.pathname);
      const sum = createHash("sha256").update(object.body).digest("base64");
      body = body.replace(
        "</CopyObjectResult>",
        `<ChecksumSHA256>${sum}</ChecksumSHA256><ChecksumType>FULL_OBJECT</ChecksumType></CopyObjectResult>`,
      );
    }
    res.writeHead(copied.status, { "Content-Type": "application/xml" });
    res.end(body);
    return true;
  }

  const front = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://front");
    const copySource = req.headers["x-amz-copy-source"];
    const entry: S3Request = {
      method: req.method ?? "",
      path: decodeURIComponent(url.pathname),
      query: url.searchParams,
      copySource: typeof copySource === "string" ? decodeURIComponent(copySource) : undefined,
    };
    requests.push(entry);
    res.on("finish", () => (entry.status = res.statusCode));
    const refusal = checkPresigned(req);
    if (refusal) {
      req.resume();
      fail(res, 403, refusal);
      return;
    }
    amend(req, res, url).then(
      (answered) => answered || forward(req, res),
      () => res.destroy(),
    );
  });
  await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(front.address() as { port: number }).port}`;
  const env = {
    S3_BUCKET: bucket,
    S3_ENDPOINT: endpoint,
    S3_REGION: "us-east-1",
    S3_ACCESS_KEY_ID: ACCESS_KEY,
    S3_SECRET_ACCESS_KEY: SECRET_KEY,
  };
  const storages: S3Storage[] = [];
  return {
    endpoint,
    bucket,
    env,
    requests,
    get copiesLikeS3() {
      return settings.copiesLikeS3;
    },
    set copiesLikeS3(value: boolean) {
      settings.copiesLikeS3 = value;
    },
    async multipartUploads() {
      const ids = await readdir(uploadsDir).catch(() => [] as string[]);
      return Promise.all(ids.map((id) => readFile(path.join(uploadsDir, id, "key"), "utf8")));
    },
    storage() {
      const s = new S3Storage({
        bucket,
        region: "us-east-1",
        endpoint,
        accessKeyId: ACCESS_KEY,
        secretAccessKey: SECRET_KEY,
        forcePathStyle: true,
      });
      storages.push(s);
      return s;
    },
    async stop() {
      for (const s of storages) s.destroy();
      front.closeAllConnections();
      await new Promise<void>((r) => front.close(() => r()));
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

// RFC 3986 unreserved characters stay, everything else is %XX (upper case), as SigV4 wants.
const encode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const hmac = (key: Buffer | string, s: string) => createHmac("sha256", key).update(s).digest();

/** null when the request is not presigned or its presigned signature holds; else the S3 error code. */
function checkPresigned(req: http.IncomingMessage): string | null {
  const url = new URL(req.url ?? "/", "http://front");
  const q = url.searchParams;
  const signature = q.get("X-Amz-Signature");
  if (!signature) return null;
  if (q.get("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256") return "AuthorizationQueryParametersError";
  const [accessKey, date, region, service, terminal] = (q.get("X-Amz-Credential") ?? "").split("/");
  if (accessKey !== ACCESS_KEY || !date || !region || !service || terminal !== "aws4_request") return "InvalidAccessKeyId";
  const amzDate = q.get("X-Amz-Date") ?? "";
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!m || !amzDate.startsWith(date)) return "AuthorizationQueryParametersError";
  const signedAt = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  if (Date.now() > signedAt + Number(q.get("X-Amz-Expires") ?? 0) * 1000) return "AccessDenied";

  const signedHeaders = (q.get("X-Amz-SignedHeaders") ?? "").split(";");
  const headerLines = signedHeaders.map((name) => {
    const value = req.headers[name];
    return `${name}:${(Array.isArray(value) ? value.join(",") : (value ?? "")).trim().replace(/\s+/g, " ")}\n`;
  });
  const query = [...q.entries()]
    .filter(([k]) => k !== "X-Amz-Signature")
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const canonical = [
    req.method,
    (req.url ?? "/").split("?")[0], // S3 signs the path as sent (encoded once)
    query,
    headerLines.join(""),
    signedHeaders.join(";"),
    q.get("X-Amz-Content-Sha256") ?? "UNSIGNED-PAYLOAD",
  ].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonical)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${SECRET_KEY}`, date), region), service), "aws4_request");
  const expected = hmac(key, toSign).toString("hex");
  const ok = expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
  return ok ? null : "SignatureDoesNotMatch";
}
