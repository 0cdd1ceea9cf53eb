// P6 baseline: a bare sharp script making the same derivatives the app makes (WebP thumb 480 q78 and preview
// 1600 q82, EXIF orientation applied, two pipelines per file as the app runs them), `concurrency` files at a time,
// written to disk. Prints { images, seconds, maxRssKiB } as JSON.
// Usage: node bench/workers/ingest-sharp.mjs <outDir> <concurrency> <file>...
import { mkdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";

const [outDir, concurrencyArg, ...files] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
mkdirSync(outDir, { recursive: true });

async function derivatives(file) {
  const buf = await readFile(file);
  const base = () => sharp(buf, { failOn: "error", limitInputPixels: 50_000_000 }).rotate();
  const [thumb, preview] = await Promise.all([
    base().resize({ width: 480, height: 480, fit: "inside", withoutEnlargement: true }).webp({ quality: 78 }).toBuffer(),
    base().resize({ width: 1600, height: 1600, fit: "inside", withoutEnlargement: true }).webp({ quality: 82 }).toBuffer(),
  ]);
  const name = path.basename(file, ".jpg");
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
