// P14, the app's side. `setup <dataDir> <corpusDir>`: a fresh library with every picture of the OCR corpus uploaded
// (derivatives made as on upload), and each preview as the app gives it to tesseract (services/ocr.server.ts forOcr)
// written to <dataDir>/bare/ for the baseline. `run <dataDir>`: every image's reading queued afresh, then a job runner
// (startRunner, OCR's own slots as on a server) reads them all; prints { images, seconds, maxRssKiB } as JSON.
// Needs DATA_DIR (= dataDir) in the environment; OCR_CONCURRENCY is the pool's threads, as on the server.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout } from "node:timers/promises";
import { db } from "~/db/connection.server";
import { OCR_JOB } from "~/lib/job-types";
import { queueOcr } from "~/models/image-ocr.server";
import { addMember, createProject } from "~/models/projects.server";
import { projectScope } from "~/models/scope.server";
import { createUser } from "~/models/users.server";
import { write } from "~/models/write.server";
import { openDatabase } from "~/services/boot.server";
import { addImageFile } from "~/services/ingest.server";
import { jobRegistry } from "~/services/job-registry.server";
import { startRunner } from "~/services/jobs.server";
import { hasPendingJob } from "~/models/jobs.server";
import { closeOcr, forOcr } from "~/services/ocr.server";
import { readObject, storage } from "~/services/storage.server";

const [mode, dataDir, corpusDir] = process.argv.slice(2);
const connection = await openDatabase();

if (mode === "setup") {
  const user = await createUser({
    email: "ocr@koala.example",
    name: "OCR",
    surname: "Bench",
    status: "active",
    terms_acknowledged_at: Date.now(),
  });
  const project = await createProject({ name: "OCR" });
  await addMember(project.id, user.id, "editor");
  const scope = await projectScope({ id: user.id, role: "user" }, project.id);
  const bare = path.join(dataDir!, "bare");
  mkdirSync(bare, { recursive: true });
  for (const file of readdirSync(corpusDir!)
    .filter((f) => f.endsWith(".jpg"))
    .sort()) {
    const id = await addImageFile(scope, readFileSync(path.join(corpusDir!, file)), {
      title: file,
      description: "",
      keywords: [],
      ocrText: "",
      originalName: file,
    });
    const image = await db().selectFrom("images").select("preview_key").where("id", "=", id).executeTakeFirstOrThrow();
    const preview = (await readObject(storage(), image.preview_key, 1e8))!.bytes;
    writeFileSync(path.join(bare, `${id}.pgm`), await forOcr(preview));
  }
  process.stdout.write(JSON.stringify({ projectId: project.id }) + "\n");
} else {
  // Every image unread and its reading queued, as after an upload of the whole corpus.
  await db().deleteFrom("jobs").where("type", "=", OCR_JOB).execute();
  await db().updateTable("images").set({ ocr_text: "", ocr_by_machine: 0 }).execute();
  const ids = (await db().selectFrom("images").select("id").execute()).map((r) => r.id);
  await write(async (trx) => {
    for (const id of ids) await queueOcr(trx, id);
  });
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  // The server's runner with no shared slots: OCR's own slots only, as many as a server gives it.
  const runner = startRunner(jobRegistry, { concurrency: 0, pollMs: 50 });
  while (await hasPendingJob(OCR_JOB)) await setTimeout(20);
  const seconds = (performance.now() - started) / 1000;
  await runner.stop();
  const read = await db().selectFrom("images").select("id").where("ocr_by_machine", "=", 1).execute();
  if (read.length < ids.length * 0.9) throw new Error(`Only ${read.length} of ${ids.length} images were read.`);
  await closeOcr();
  process.stdout.write(
    JSON.stringify({ images: ids.length, seconds, maxRssKiB: process.resourceUsage().maxRSS, rssBeforeKiB: rssBefore / 1024 }) + "\n",
  );
}
await connection.close();
