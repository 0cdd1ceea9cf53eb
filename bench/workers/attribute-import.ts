/**
 * P9, in a process of its own (pinned by the harness): Import Attributes CSV of 1,000,000 rows (image id + 5 user
 * attributes) into the 1M project, the product's way, against a bare csv-parse stream + prepared inserts of the same
 * values, interleaved in rounds (A B, B A, …), each side on a fresh, fsynced copy of the database. Prints one JSON
 * object.
 *
 *   A: importCsvFile(scope, file): the check pass (csv-parse stream, header mapped to attributes, ids checked a
 *      thousand at a time, every value by the rule), then the write pass (csv-parse again, 4,000 values per
 *      multi-row upsert through Kysely, each in a transaction of its own), in a child process of its own: its peak
 *      RSS above the child's at the start (modules loaded, database open) is sampled every 20 ms.
 *   B: better-sqlite3 with the app's pragmas: one csv-parse stream of the same file, a prepared single-row upsert
 *      run for each value, batches of 1,000 rows, all in one transaction.
 *
 * Input: argv[2] JSON { rounds, projectId, workDir } and the app's environment for the dataset.
 */
import { createReadStream, createWriteStream, mkdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { spawn } from "node:child_process";
import { once } from "node:events";
import SQLite from "better-sqlite3";
import { freshCopy as copyOf } from "../lib/sqlite-copy";
import { parse } from "csv-parse";
import { config, loadConfig, setConfig } from "~/config.server";
import { connect, db, setConnection, sqliteSettings } from "~/db/connection.server";
import { SYSTEM } from "~/models/actor";
import { createAttribute } from "~/models/attributes.server";
import { projectScope } from "~/models/scope.server";
import { openDatabase } from "~/services/boot.server";
import { importCsvFile } from "~/services/attribute-import.server";

/**
 * The product side runs in a child process of its own, one import each, so its peak memory is the import's alone
 * (not this process's preparation: a million ids, the file written). The child prints { ms, peakMb }.
 */
if (process.argv[3] === "product-child") {
  const job = JSON.parse(process.argv[2]!) as { db: string; csv: string; projectId: number };
  setConfig(loadConfig(process.env));
  const connection = connect({ dialect: "sqlite", file: job.db });
  setConnection(connection);
  const scope = await projectScope(SYSTEM, job.projectId);
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const report = await importCsvFile(scope, job.csv);
  const ms = performance.now() - started;
  clearInterval(sampler);
  await connection.close();
  if (report.outcome !== "success") throw new Error(`The import answered ${report.outcome}: ${JSON.stringify(report.errors.slice(0, 3))}`);
  process.stdout.write(`${JSON.stringify({ ms, peakMb: (peak - base) / 1048576, baseMb: base / 1048576 })}\n`);
  process.exit(0);
}

const args = JSON.parse(process.argv[2] ?? "{}") as { rounds: number; projectId: number; workDir: string };
setConfig(loadConfig(process.env));
const source = config().database;
if (source.dialect !== "sqlite") throw new Error("P9 runs on a SQLite dataset");
rmSync(args.workDir, { recursive: true, force: true });
mkdirSync(args.workDir, { recursive: true });
const template = path.join(args.workDir, "template.sqlite");
const csvFile = path.join(args.workDir, "attributes.csv");
const NAMES = ["Imp_store", "Imp_shelf", "Imp_brand", "Imp_price", "Imp_promo"];
const VALUES = [
  ["Store A", "Store B", "Store C", "Store D"],
  ["Top", "Middle", "Bottom"],
  ["Acme", "Globex", "Initech", "Umbrella", "Hooli"],
  ["Low", "Mid", "High"],
  ["Yes", "No"],
];

// The template: a consistent copy of the dataset with five user attributes to import into.
const original = new SQLite(source.file, { readonly: true });
await original.backup(template);
original.close();
setConfig({ ...config(), database: { dialect: "sqlite", file: template } });
const setup = await openDatabase();
const system = await projectScope(SYSTEM, args.projectId);
const attributeIds: number[] = [];
for (const name of NAMES) attributeIds.push(await createAttribute(system, { name, type: 3, active: false }));
const ids = (await db().selectFrom("images").select("id").where("project_id", "=", args.projectId).orderBy("id").execute()).map(
  (r) => r.id,
);
await setup.close();

// The file: every image of the project once, five values each.
{
  const out = createWriteStream(csvFile);
  out.write(`Image ID,${NAMES.join(",")}\n`);
  for (const [i, id] of ids.entries()) {
    if (!out.write(`${id},${VALUES.map((v, j) => v[(i + j) % v.length]).join(",")}\n`)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}
const rows = ids.length;
const bytes = statSync(csvFile).size;

const freshCopy = (name: string) => copyOf(template, args.workDir, name);

const imported = (file: string) => {
  const raw = new SQLite(file, { readonly: true });
  const n = (
    raw.prepare(`select count(*) as n from image_attribute_values where attribute_id in (${attributeIds.join(",")})`).get() as { n: number }
  ).n;
  raw.close();
  return n;
};

/** A: the product, in a fresh child process. Returns ms and the peak RSS above the child's at the start, in MB. */
async function product(): Promise<{ ms: number; peakMb: number; baseMb: number }> {
  const file = freshCopy("product");
  const child = spawn(
    process.execPath,
    [...process.execArgv, process.argv[1]!, JSON.stringify({ db: file, csv: csvFile, projectId: args.projectId }), "product-child"],
    {
      env: process.env,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  const [code] = (await once(child, "exit")) as [number];
  if (code !== 0) throw new Error(`The import child exited ${code}`);
  const result = JSON.parse(out.trim().split("\n").pop()!) as { ms: number; peakMb: number; baseMb: number };
  if (imported(file) !== rows * NAMES.length) throw new Error(`The import wrote ${imported(file)} of ${rows * NAMES.length} values`);
  return result;
}

/** B: csv-parse + prepared inserts, one transaction. Returns ms. */
async function bare(): Promise<number> {
  const file = freshCopy("bare");
  const raw = new SQLite(file);
  sqliteSettings(raw);
  const upsert = raw.prepare(
    "insert into image_attribute_values (image_id, attribute_id, value, created_by, created_at) values (?, ?, ?, null, ?) on conflict (image_id, attribute_id) do update set value = excluded.value",
  );
  const at = Date.now();
  const writeBatch = raw.transaction((batch: string[][]) => {
    for (const record of batch) for (let j = 0; j < NAMES.length; j++) upsert.run(Number(record[0]), attributeIds[j], record[j + 1], at);
  });
  const started = performance.now();
  raw.exec("begin");
  let batch: string[][] = [];
  let header = true;
  for await (const record of createReadStream(csvFile).pipe(parse({ bom: true })) as AsyncIterable<string[]>) {
    if (header) {
      header = false;
      continue;
    }
    batch.push(record);
    if (batch.length >= 1000) {
      writeBatch(batch);
      batch = [];
    }
  }
  writeBatch(batch);
  raw.exec("commit");
  const ms = performance.now() - started;
  raw.close();
  if (imported(file) !== rows * NAMES.length) throw new Error(`The bare side wrote ${imported(file)} values`);
  return ms;
}

const rounds: { a: number; b: number; peakMb: number; baseMb: number }[] = [];
for (let r = 0; r < args.rounds; r++) {
  if (r % 2 === 0) {
    const a = await product();
    rounds.push({ a: a.ms, peakMb: a.peakMb, baseMb: a.baseMb, b: await bare() });
  } else {
    const b = await bare();
    const a = await product();
    rounds.push({ a: a.ms, peakMb: a.peakMb, baseMb: a.baseMb, b });
  }
}
rmSync(args.workDir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ rows, bytes, rounds })}\n`);
