/**
 * P7b, in a process of its own (pinned by the harness): bulk Add of a whole project (Select all) to an empty board,
 * the product's way, against a bare INSERT … SELECT of the same rows, interleaved in rounds (A B, B A, …). Every
 * side of every round works on a fresh copy of the dataset's database (a file, or a database made from a template)
 * with the board already made, so each starts
 * from an empty board. Prints one JSON object.
 *
 *   A: what the bulk Add page runs: runBulk(scope, { all: true, ids: [] }, add to the board) — over BULK_INLINE_MAX,
 *      so it counts the selection and queues the bulk job — then that job, run to its end in this process by
 *      runOnce as the job runner would: the selection cut into id ranges of 2,000, per range copyToBoard (count,
 *      INSERT … SELECT … ON CONFLICT DO NOTHING, cover, versions) in a transaction of its own, and the progress.
 *   B: INSERT INTO board_images (board_id, image_id, added_by, added_at) SELECT ?, id, ?, ? FROM images
 *      WHERE project_id = ?: one better-sqlite3 statement with the app's pragmas, or one pg client's on PostgreSQL.
 *
 * Input: argv[2] JSON { rounds, projectId, email, workDir } and the app's environment for the dataset.
 */
import { mkdirSync, rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import SQLite from "better-sqlite3";
import pg from "pg";
import { datasetCopies, readCopy } from "../lib/dataset-copies";
import { config, loadConfig, setConfig, type DatabaseConfig } from "~/config.server";
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
rmSync(args.workDir, { recursive: true, force: true });
mkdirSync(args.workDir, { recursive: true });

const copies = await datasetCopies(source, args.workDir, "bulk_add");
setConfig({ ...config(), database: copies.template });
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

/** The board's images in a copy. */
const onBoard = (at: DatabaseConfig) =>
  readCopy(at, async (db) =>
    Number(
      (
        await db
          .selectFrom("board_images")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("board_id", "=", board.id)
          .executeTakeFirstOrThrow()
      ).n,
    ),
  );

/** A: the product's path, from the Add page's runBulk to the end of the job it queues. Returns ms. */
async function product(): Promise<number> {
  const at = await copies.fresh("product");
  const connection = connect(at);
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
  const added = await onBoard(at);
  if (added !== count) throw new Error(`The job put ${added} of ${count} images on the board`);
  return ms;
}

/** B: the bare INSERT … SELECT of the same rows (better-sqlite3, or one pg client). Returns ms. */
async function bare(): Promise<number> {
  const at = await copies.fresh("bare");
  const statement = (p: (n: number) => string) =>
    `insert into board_images (board_id, image_id, added_by, added_at) select ${p(1)}, id, ${p(2)}, ${p(3)} from images where project_id = ${p(4)}`;
  const values = [board.id, actor.id, Date.now(), args.projectId];
  let ms: number;
  let changes: number;
  if (at.dialect === "sqlite") {
    const raw = new SQLite(at.file);
    sqliteSettings(raw);
    const insert = raw.prepare(statement(() => "?"));
    const started = performance.now();
    changes = insert.run(...values).changes;
    ms = performance.now() - started;
    raw.close();
  } else {
    const client = new pg.Client({ connectionString: at.url });
    await client.connect();
    try {
      const started = performance.now();
      changes =
        (
          await client.query(
            statement((n) => `$${n}`),
            values,
          )
        ).rowCount ?? 0;
      ms = performance.now() - started;
    } finally {
      await client.end();
    }
  }
  if (changes !== count) throw new Error(`The bare INSERT added ${changes} of ${count} rows`);
  return ms;
}

// The copies go whatever happens (on PostgreSQL each is a database the size of the dataset's).
const rounds: { a: number; b: number }[] = [];
try {
  // One unmeasured run per side: JIT, page cache.
  await product();
  await bare();
  for (let r = 0; r < args.rounds; r++) {
    // A B, then B A: the two sides alternate who goes first, so a drift in the machine's speed hits both alike.
    if (r % 2 === 0) {
      const a = await product();
      rounds.push({ a, b: await bare() });
    } else {
      const b = await bare();
      rounds.push({ a: await product(), b });
    }
  }
} finally {
  await copies.drop();
}
rmSync(args.workDir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ count, rounds })}\n`);
