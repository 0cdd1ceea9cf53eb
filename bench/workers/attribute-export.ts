/**
 * P9b, in a process of its own (pinned by the harness): the attribute export's CSV of a whole project (Select all),
 * the product's writer, against a bare keyset read + csv-stringify of the same rows, interleaved in rounds (A B,
 * B A, …), each side writing its own file. Prints one JSON object.
 *
 *   A: writeAttributesCsv(scope, { all: true, ids: [] }, file), what the export job runs before it mails: the
 *      selection read 1,000 images at a time in id order (selectionRows), each page's attribute values in one query
 *      (attributeValuesOf), csv-stringify with BOM and escape_formulas into a file stream, back-pressure honoured.
 *   B: prepared statements (better-sqlite3, or named pg statements on PostgreSQL): `select id, title, keywords from
 *      images where project_id = ? and id > ? order by id limit 1000`, the page's values by `image_id in (…)`
 *      (`= any($1)`), the same columns through csv-stringify (same options) into a file stream.
 *
 * Input: argv[2] JSON { rounds, projectId, email, workDir } and the app's environment for the dataset.
 */
import { createWriteStream, mkdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pipeline } from "node:stream/promises";
import SQLite from "better-sqlite3";
import pg from "pg";
import { stringify } from "csv-stringify";
import { config, loadConfig, setConfig } from "~/config.server";
import { projectScope } from "~/models/scope.server";
import { findUserByEmail } from "~/models/users.server";
import { sqliteSettings } from "~/db/connection.server";
import { openDatabase } from "~/services/boot.server";
import { writeAttributesCsv } from "~/services/attribute-export.server";

const args = JSON.parse(process.argv[2] ?? "{}") as { rounds: number; projectId: number; email: string; workDir: string };
setConfig(loadConfig(process.env));
const source = config().database;
rmSync(args.workDir, { recursive: true, force: true });
mkdirSync(args.workDir, { recursive: true });
const services = await openDatabase();
const user = await findUserByEmail(args.email);
if (!user) throw new Error(`No bench user ${args.email}`);
const scope = await projectScope({ id: user.id, role: user.role }, args.projectId);

async function product(): Promise<{ ms: number; rows: number; bytes: number }> {
  const file = path.join(args.workDir, "product.csv");
  const started = performance.now();
  const rows = await writeAttributesCsv(scope, { all: true, ids: [] }, file);
  const ms = performance.now() - started;
  return { ms, rows, bytes: statSync(file).size };
}

/** The bare side's statements: better-sqlite3 prepared statements, or named (server-side prepared) pg statements. */
interface Bare {
  page(after: number): Promise<{ id: number; title: string; keywords: string }[]>;
  values(ids: number[]): Promise<{ image_id: number; attribute_id: number; value: string }[]>;
  attributes: { id: number; name: string }[];
  close(): Promise<void>;
}
async function openBare(): Promise<Bare> {
  const pageSql = (p: (n: number) => string) =>
    `select id, title, keywords from images where project_id = ${p(1)} and id > ${p(2)} order by id limit 1000`;
  const attributesSql = (p: (n: number) => string) => `select id, name from attributes where project_id = ${p(1)} order by name, id`;
  if (source.dialect === "sqlite") {
    const raw = new SQLite(source.file, { readonly: true });
    sqliteSettings(raw, source.cacheMb, { readonly: true }); // the app's page cache, as its connection has
    const pageOf = raw.prepare(pageSql(() => "?"));
    return {
      page: async (after) => pageOf.all(args.projectId, after) as { id: number; title: string; keywords: string }[],
      values: async (ids) =>
        raw
          .prepare(`select image_id, attribute_id, value from image_attribute_values where image_id in (${ids.map(() => "?").join(",")})`)
          .all(...ids) as { image_id: number; attribute_id: number; value: string }[],
      attributes: raw.prepare(attributesSql(() => "?")).all(args.projectId) as { id: number; name: string }[],
      close: async () => void raw.close(),
    };
  }
  const client = new pg.Client({ connectionString: source.url });
  await client.connect();
  const dollar = (n: number) => `$${n}`;
  return {
    page: async (after) => (await client.query({ name: "page", text: pageSql(dollar), values: [args.projectId, after] })).rows,
    values: async (ids) =>
      (
        await client.query({
          name: "values",
          text: "select image_id, attribute_id, value from image_attribute_values where image_id = any($1)",
          values: [ids],
        })
      ).rows,
    attributes: (await client.query(attributesSql(dollar), [args.projectId])).rows,
    close: () => client.end(),
  };
}
const raw = await openBare();
const attributes = raw.attributes;

async function bare(): Promise<{ ms: number; rows: number; bytes: number }> {
  const file = path.join(args.workDir, "bare.csv");
  const started = performance.now();
  const csv = stringify({
    bom: true,
    header: true,
    columns: ["Image ID", "Title", "Keywords", ...attributes.map((a) => a.name)],
    escape_formulas: true,
  });
  const done = pipeline(csv, createWriteStream(file));
  let after = 0;
  let rows = 0;
  for (;;) {
    const page = await raw.page(after);
    if (!page.length) break;
    const ids = page.map((r) => r.id);
    const values = await raw.values(ids);
    const byImage = new Map<number, Map<number, string>>();
    for (const v of values) (byImage.get(v.image_id) ?? byImage.set(v.image_id, new Map()).get(v.image_id)!).set(v.attribute_id, v.value);
    for (const r of page) {
      const own = byImage.get(r.id);
      if (!csv.write([r.id, r.title, (JSON.parse(r.keywords) as string[]).join(", "), ...attributes.map((a) => own?.get(a.id) ?? "")]))
        await new Promise((resolve) => csv.once("drain", resolve));
    }
    rows += page.length;
    after = page[page.length - 1]!.id;
  }
  csv.end();
  await done;
  return { ms: performance.now() - started, rows, bytes: statSync(file).size };
}

// One unmeasured run per side: JIT, page cache.
const warmA = await product();
const warmB = await bare();
if (warmA.rows !== warmB.rows || warmA.bytes !== warmB.bytes)
  throw new Error(`The two sides differ: product ${warmA.rows} rows / ${warmA.bytes} B, bare ${warmB.rows} rows / ${warmB.bytes} B`);
const rounds: { a: number; b: number }[] = [];
for (let r = 0; r < args.rounds; r++) {
  if (r % 2 === 0) {
    const a = (await product()).ms;
    rounds.push({ a, b: (await bare()).ms });
  } else {
    const b = (await bare()).ms;
    rounds.push({ a: (await product()).ms, b });
  }
}
await raw.close();
await services.close();
rmSync(args.workDir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ rows: warmA.rows, bytes: warmA.bytes, rounds })}\n`);
