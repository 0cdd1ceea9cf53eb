// P6 baseline: a bare sharp script making the same derivatives the app makes (WebP thumb 480 q78 and preview
// 1600 q82, EXIF orientation applied, two pipelines per file as the app runs them), `concurrency` files at a time,
// written to disk. Prints { images, seconds, maxRssKiB } as JSON.
// With INGEST_S3_ENDPOINT and INGEST_S3_BUCKET (P6-s3) each original is also sent to the bucket as the app's S3
// driver sends a stream: lib-storage's Upload, 8 MiB parts, two at a time (one PutObject for a file under a part).
// Usage: node bench/workers/ingest-sharp.mjs <outDir> <concurrency> <file>...
import { mkdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";

const [outDir, concurrencyArg, ...files] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
mkdirSync(outDir, { recursive: true });

const s3 = process.env.INGEST_S3_ENDPOINT ? await bucketWriter(process.env.INGEST_S3_ENDPOINT, process.env.INGEST_S3_BUCKET) : null;
async function bucketWriter(endpoint, bucket) {
  const { S3Client } = await import("@aws-sdk/client-s3");
  const { Upload } = await import("@aws-sdk/lib-storage");
  const client = new S3Client({
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return (key, body) =>
    new Upload({ client, params: { Bucket: bucket, Key: key, Body: body }, partSize: 8 * 1024 * 1024, queueSize: 2 }).done();
}

async function derivatives(file) {
  const buf = await readFile(file);
  const base = () => sharp(buf, { failOn: "error", limitInputPixels: 50_000_000 }).rotate();
  const [thumb, preview] = await Promise.all([
    base().resize({ width: 480, height: 480, fit: "inside", withoutEnlargement: true }).webp({ quality: 78 }).toBuffer(),
    base().resize({ width: 1600, height: 1600, fit: "inside", withoutEnlargement: true }).webp({ quality: 82 }).toBuffer(),
  ]);
  const name = path.basename(file, ".jpg");
  if (s3) await s3(`originals/${name}.jpg`, buf);
  await writeFile(path.join(outDir, `${name}-thumb.webp`), thumb);
  await writeFile(path.join(outDir, `${name}-preview.webp`), preview);
}

// Warm up libvips (the server has done so before its first upload).
await sharp({ create: { width: 64, height: 64, channels: 3, background: "#888" } })
  .webp()
  .toBuffer();
const queue = [...files];
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    for (let f = queue.shift(); f; f = queue.shift()) await derivatives(f);
  }),
);
const seconds = (performance.now() - started) / 1000;
process.stdout.write(JSON.stringify({ images: files.length, seconds, maxRssKiB: process.resourceUsage().maxRSS }) + "\n");
