// P6 client: uploads files through the app's three steps (signed URL, PUT, register) as the browser's uploader
// does, `concurrency` at a time. Prints { images, seconds } as JSON; any failed file fails the run.
// Usage: node bench/workers/ingest-client.mjs <baseUrl> <cookie> <projectId> <concurrency> <file>...
import { readFileSync } from "node:fs";
import path from "node:path";

const [base, cookie, projectIdArg, concurrencyArg, ...files] = process.argv.slice(2);
const projectId = Number(projectIdArg);
const post = (url, body) =>
  fetch(base + url, { method: "POST", headers: { Cookie: cookie, "Content-Type": "application/json" }, body: JSON.stringify(body) });

async function ingest(file) {
  const bytes = readFileSync(file);
  const signed = await post("/api/uploads", { clientID: projectId, fileName: path.basename(file) });
  if (!signed.ok) throw new Error(`sign ${signed.status} ${await signed.text()}`);
  const { uploadUrl, key } = await signed.json();
  const put = await fetch(new URL(uploadUrl, base), { method: "PUT", body: bytes });
  if (!put.ok) throw new Error(`PUT ${put.status}`);
  const registered = await post("/api/images", { clientID: projectId, newImage: { imgURL: key, imgOrgName: path.basename(file) } });
  if (registered.status !== 201) throw new Error(`register ${registered.status} ${await registered.text()}`);
}

const queue = [...files];
const started = performance.now();
await Promise.all(
  Array.from({ length: Number(concurrencyArg) }, async () => {
    for (let f = queue.shift(); f; f = queue.shift()) await ingest(f);
  }),
);
process.stdout.write(JSON.stringify({ images: files.length, seconds: (performance.now() - started) / 1000 }) + "\n");
