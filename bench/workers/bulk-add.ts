/**
 * P7b, in a process of its own (pinned by the harness): bulk Add of a whole project (Select all) to an empty board,
 * the product's way, against a bare INSERT … SELECT of the same rows, interleaved in rounds (A B, B A, …). Every
 * side of every round works on a fresh copy of the dataset's database with the board already made, so each starts
 * from an empty board. Prints one JSON object.
 *
 *   A: what the bulk Add page runs: runBulk(scope, { all: true, ids: [] }, add to the board) — over BULK_INLINE_MAX,
 *      so it counts the selection and queues the bulk job — then that job, run to its end in this process by
 *      runOnce as the job runner would: the selection cut into id ranges of 2,000, per range copyToBoard (count,
 *      INSERT … SELECT … ON CONFLICT DO NOTHING, cover, versions) in a transaction of its own, and the progress.
 *   B: INSERT INTO board_images (board_id, image_id, added_by, added_at) SELECT ?, id, ?, ? FROM images
 *      WHERE project_id = ?: one better-sqlite3 statement, the app's pragmas.
 *
 * Input: argv[2] JSON { rounds, projectId, email, workDir } and the app's environment for the dataset.
 */
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import SQLite from "better-sqlite3";
import { freshCopy as copyOf } from "../lib/sqlite-copy";
import { config, loadConfig, setConfig } from "~/config.server";
import { connect, db, setConnection, sqliteSettings } from "~/db/connection.server";
import type { Actor } from "~/models/actor";
import { createBoard } from "~/models/boards.server";
import { getJob } from "~/models/jobs.server";
import { projectScope } from "~/models/scope.server";
import { findUserByEmail } from "~/models/users.server";
import { openDatabase } from "~/services/boot.server";
import { runBulk } from "~/services/bulk.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";

const args = JSON.parse(process.argv[2] ?? "{}") as { rounds: number; projectId: number; email: string; workDir: string };

setConfig(loadConfig(process.env));
const source = config().database;
if (source.dialect !== "sqlite") throw new Error("P7b runs on a SQLite dataset");
rmSync(args.workDir, { recursive: true, force: true });
mkdirSync(args.workDir, { recursive: true });
const template = path.join(args.workDir, "template.sqlite");

// The template: a consistent copy of the dataset (WAL included), migrated, with one empty board.
const original = new SQLite(source.file, { readonly: true });
await original.backup(template);
original.close();
setConfig({ ...config(), database: { dialect: "sqlite", file: template } });
const setup = await openDatabase();
const user = await findUserByEmail(args.email);
if (!user) throw new Error(`No bench user ${args.email}`);
const actor: Actor = { id: user.id, role: user.role };
const board = await createBoard(await projectScope(actor, args.projectId), { title: "Bench bulk add" });
const count = Number(
  (
    await db()
      .selectFrom("images")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("project_id", "=", args.projectId)
      .executeTakeFirstOrThrow()
  ).n,
);
await setup.close();

const freshCopy = (name: string) => copyOf(template, args.workDir, name);

const onBoard = (file: string) => {
  const raw = new SQLite(file, { readonly: true });
  const n = (raw.prepare("select count(*) as n from board_images where board_id = ?").get(board.id) as { n: number }).n;
  raw.close();
  return n;
};

/** A: the product's path, from the Add page's runBulk to the end of the job it queues. Returns ms. */
async function product(): Promise<number> {
  const file = freshCopy("product");
  const connection = connect({ dialect: "sqlite", file });
  setConnection(connection);
  let ms: number;
  let jobId: number;
  try {
    const scope = await projectScope(actor, args.projectId);
    const started = performance.now();
    const queued = await runBulk(scope, { all: true, ids: [] }, { op: "add", target: board.id });
    if (!("jobId" in queued)) throw new Error(`runBulk ran ${count} images inline; expected a job`);
    jobId = queued.jobId;
    while (await runOnce(jobRegistry, "bench-bulk-add"));
    ms = performance.now() - started;
    const job = await getJob(jobId);
    if (job?.status !== "done") throw new Error(`The bulk job ended ${job?.status}: ${job?.last_error ?? ""}`);
  } finally {
    await connection.close();
    setConnection(undefined);
  }
  if (onBoard(file) !== count) throw new Error(`The job put ${onBoard(file)} of ${count} images on the board`);
  return ms;
}

/** B: the bare INSERT … SELECT of the same rows. Returns ms. */
function bare(): number {
  const file = freshCopy("bare");
  const raw = new SQLite(file);
  sqliteSettings(raw);
  const insert = raw.prepare(
    "insert into board_images (board_id, image_id, added_by, added_at) select ?, id, ?, ? from images where project_id = ?",
  );
  const started = performance.now();
  const { changes } = insert.run(board.id, actor.id, Date.now(), args.projectId);
  const ms = performance.now() - started;
  raw.close();
  if (changes !== count) throw new Error(`The bare INSERT added ${changes} of ${count} rows`);
  return ms;
}

// One unmeasured run per side: JIT, page cache.
await product();
bare();
const rounds: { a: number; b: number }[] = [];
for (let r = 0; r < args.rounds; r++) {
  // A B, then B A: the two sides alternate who goes first, so a drift in the machine's speed hits both alike.
  if (r % 2 === 0) {
    const a = await product();
    rounds.push({ a, b: bare() });
  } else {
    const b = bare();
    rounds.push({ a: await product(), b });
  }
}
rmSync(args.workDir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ count, rounds })}\n`);
