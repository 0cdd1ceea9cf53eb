// P14's baseline: bare tesseract.js reading the same pictures the app reads (the previews ocr-app.ts setup wrote, as
// the app gives them to tesseract), with the same workers (English "best int" data from the npm package,
// LSTM only, 300 dpi), `threads` of them in a scheduler. Worker start-up is timed, as the app's pool starts on its
// first image. Prints { images, seconds, maxRssKiB, rssBeforeKiB } as JSON.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { createScheduler, createWorker, OEM } from "tesseract.js";

const [dir, threads = "1"] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const langPath = path.join(path.dirname(require.resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int");
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".pgm"))
  .map((f) => readFileSync(path.join(dir, f)));

const rssBefore = process.memoryUsage().rss;
const started = performance.now();
const scheduler = createScheduler();
for (let i = 0; i < Number(threads); i++) {
  const worker = await createWorker("eng", OEM.LSTM_ONLY, { langPath, cacheMethod: "none", gzip: true });
  await worker.setParameters({ user_defined_dpi: "300" });
  scheduler.addWorker(worker);
}
// One at a time, as the app's job slot hands them out (OCR_CONCURRENCY readings at once).
for (let i = 0; i < files.length; i += Number(threads))
  await Promise.all(files.slice(i, i + Number(threads)).map((f) => scheduler.addJob("recognize", f, {}, { text: false, blocks: true })));
const seconds = (performance.now() - started) / 1000;
await scheduler.terminate();
process.stdout.write(
  JSON.stringify({ images: files.length, seconds, maxRssKiB: process.resourceUsage().maxRSS, rssBeforeKiB: rssBefore / 1024 }) + "\n",
);
