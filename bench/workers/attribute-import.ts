/**
 * P9 and P9-pg, in a process of its own (pinned by the harness): Import Attributes CSV of 1,000,000 rows (image id + 5
 * user attributes) into the 1M project, the product's way, against the fastest bare import of the same values the
 * dialect has, interleaved in rounds (A B, B A, …), each side on a fresh copy of the database (an fsynced file, or a
 * database made from a template). Prints one JSON object.
 *
 *   A: importCsvFile(scope, file): the check pass (csv-parse stream, header mapped to attributes, ids checked a
 *      thousand at a time, every value by the rule), then the write pass (csv-parse again, 4,000 values per
 *      multi-row upsert through Kysely, each in a transaction of its own), in a child process of its own: its peak
 *      RSS above the child's at the start (modules loaded, database open) is sampled every 20 ms.
 *   B, SQLite: better-sqlite3 with the app's pragmas: one csv-parse stream of the same file, a prepared single-row
 *      upsert run for each value, batches of 1,000 rows, all in one transaction.
 *   B, PostgreSQL: one pg client, one transaction: the file COPY'd as it is (FORMAT csv, HEADER) into a temporary
 *      table, then one INSERT … SELECT of its five columns as values … ON CONFLICT DO UPDATE.
 *
 * Input: argv[2] JSON { rounds, projectId, workDir } and the app's environment for the dataset.
 */
import { createReadStream, createWriteStream, mkdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { spawn } from "node:child_process";
import { once } from "node:events";
import SQLite from "better-sqlite3";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { datasetCopies, readCopy } from "../lib/dataset-copies";
import { parse } from "csv-parse";
import { config, loadConfig, setConfig, type DatabaseConfig } from "~/config.server";
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
  const job = JSON.parse(process.argv[2]!) as { db: DatabaseConfig; csv: string; projectId: number };
  setConfig({ ...loadConfig(process.env), database: job.db });
  const connection = connect(job.db);
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
rmSync(args.workDir, { recursive: true, force: true });
mkdirSync(args.workDir, { recursive: true });
const csvFile = path.join(args.workDir, "attributes.csv");
const NAMES = ["Imp_store", "Imp_shelf", "Imp_brand", "Imp_price", "Imp_promo"];
const VALUES = [
  ["Store A", "Store B", "Store C", "Store D"],
  ["Top", "Middle", "Bottom"],
  ["Acme", "Globex", "Initech", "Umbrella", "Hooli"],
  ["Low", "Mid", "High"],
  ["Yes", "No"],
];

// The template: a copy of the dataset with five user attributes to import into.
const copies = await datasetCopies(source, args.workDir, "attr_import");
setConfig({ ...config(), database: copies.template });
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

/** Throws unless `side` wrote every value of the file into the copy `at`. */
async function expectEveryValue(at: DatabaseConfig, side: string) {
  const n = await readCopy(at, async (db) =>
    Number(
      (
        await db
          .selectFrom("image_attribute_values")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("attribute_id", "in", attributeIds)
          .executeTakeFirstOrThrow()
      ).n,
    ),
  );
  if (n !== rows * NAMES.length) throw new Error(`${side} wrote ${n} of ${rows * NAMES.length} values`);
}

/** A: the product, in a fresh child process. Returns ms and the peak RSS above the child's at the start, in MB. */
async function product(): Promise<{ ms: number; peakMb: number; baseMb: number }> {
  const at = await copies.fresh("product");
  const child = spawn(
    process.execPath,
    [...process.execArgv, process.argv[1]!, JSON.stringify({ db: at, csv: csvFile, projectId: args.projectId }), "product-child"],
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
  await expectEveryValue(at, "The import");
  return result;
}

/** B on SQLite: csv-parse + prepared inserts, one transaction. Returns ms. */
async function bareSqlite(file: string): Promise<number> {
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
  return ms;
}

/**
 * B on PostgreSQL: the file COPY'd into a temporary table, then one INSERT … SELECT of its five columns, one
 * transaction. Returns ms.
 */
async function barePg(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const started = performance.now();
    await client.query("begin");
    await client.query(`create temporary table staging (image_id integer, ${NAMES.map((_, j) => `v${j} text`).join(", ")}) on commit drop`);
    await pipeline(createReadStream(csvFile), client.query(copyFrom("copy staging from stdin (format csv, header true)")));
    const values = attributeIds.map((id, j) => `(${id}, s.v${j})`).join(", ");
    await client.query(
      `insert into image_attribute_values (image_id, attribute_id, value, created_by, created_at)
       select s.image_id, v.attribute_id, v.value, null, $1 from staging s cross join lateral (values ${values}) as v (attribute_id, value)
       where v.value <> ''
       on conflict (image_id, attribute_id) do update set value = excluded.value`,
      [Date.now()],
    );
    await client.query("commit");
    return performance.now() - started;
  } finally {
    await client.end();
  }
}

/** B: the dialect's bare import, on a fresh copy. Returns ms. */
async function bare(): Promise<number> {
  const at = await copies.fresh("bare");
  const ms = at.dialect === "sqlite" ? await bareSqlite(at.file) : await barePg(at.url);
  await expectEveryValue(at, "The bare side");
  return ms;
}

const rounds: { a: number; b: number; peakMb: number; baseMb: number }[] = [];
try {
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
} finally {
  await copies.drop();
}
rmSync(args.workDir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ rows, bytes, rounds })}\n`);
