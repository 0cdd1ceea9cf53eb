import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { migrateToLatest } from "~/db/migrations.server";
import { positionsOutOfOriginals } from "~/db/migrations/028-positions-out-of-originals.server";
import { ocrReadKey } from "~/db/migrations/029-ocr-read-key.server";
import { duplicateGroups } from "~/db/migrations/030-duplicate-groups.server";
import { POSITIONS_JOB } from "~/lib/job-types";
import { projectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { insertManyImages, makeProject, makeUser } from "../helpers/fixtures";

/**
 * Rolling upgrades and rollbacks (docs/deploy/README.md): a version started on a database that a newer one has
 * already migrated serves on it (its migrations only added), and refuses one whose history it cannot place.
 */
describe.each(dialects)("migrations on a database ahead of the code (%s)", (dialect) => {
  let t: TestDatabase;
  afterEach(() => t.drop());

  const record = (name: string) =>
    sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(db());

  it("serves a database a newer version migrated (a rollback, or an old instance mid-upgrade): nothing run, nothing refused", async () => {
    t = await freshDatabase(dialect);
    await record("999-from-the-next-release");
    expect(await migrateToLatest(db(), dialect)).toEqual([]);
    const names = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db());
    expect(names.rows.at(-1)).toEqual({ name: "999-from-the-next-release" });
  });

  it("refuses a database whose unknown migration sorts among its own (a history it cannot place)", async () => {
    t = await freshDatabase(dialect);
    await record("0105-renamed");
    await expect(migrateToLatest(db(), dialect)).rejects.toThrow(/does not know, among its own: 0105-renamed/);
  });
});

describe.each(dialects)("migration 028: positions out of originals stored before (%s)", (dialect) => {
  let t: TestDatabase;
  afterEach(() => t.drop());

  it("queues the positions job once for each project that keeps none and has images, and for no other", async () => {
    t = await freshDatabase(dialect);
    const owner = await makeUser();
    const scopeOf = async (id: number) => projectScope(owner.actor, id);
    const keepsNone = (await makeProject([{ actor: owner.actor, role: "manager" }])).id;
    const keeps = (await makeProject([{ actor: owner.actor, role: "manager" }])).id;
    await makeProject([{ actor: owner.actor, role: "manager" }]); // keeps none, but has no images
    await db().updateTable("projects").set({ keep_gps: 1 }).where("id", "=", keeps).execute();
    for (const id of [keepsNone, keeps]) await insertManyImages(await scopeOf(id), 2, { first: id * 10, title: (i) => `Image ${i}` });

    // As on a database from before the migration: run it (and only it) again.
    await positionsOutOfOriginals().up(db());
    const jobs = await db().selectFrom("jobs").select(["type", "payload", "status"]).where("type", "=", POSITIONS_JOB).execute();
    expect(jobs).toEqual([{ type: POSITIONS_JOB, payload: JSON.stringify({ projectId: keepsNone, after: 0 }), status: "queued" }]);
  });
});

describe.each(dialects)("migration 029: which picture OCR read (%s)", (dialect) => {
  let t: TestDatabase;
  afterEach(() => t.drop());

  it("adds the column and writes no row: no image is marked, whoever wrote its text", async () => {
    t = await freshDatabase(dialect);
    const owner = await makeUser();
    const id = (await makeProject([{ actor: owner.actor, role: "manager" }])).id;
    await insertManyImages(await projectScope(owner.actor, id), 2, { first: 1, title: (i) => `Image ${i}` });
    const [machine] = (await db().selectFrom("images").select("id").orderBy("id").execute()).map((r) => r.id);
    await db().updateTable("images").set({ ocr_text: "Read", ocr_by_machine: 1 }).where("id", "=", machine!).execute();

    // As on a database from before the migration: the column gone, then the migration (and only it) run again.
    await sql`alter table images drop column ocr_read_key`.execute(db());
    await ocrReadKey().up(db());
    const rows = await db().selectFrom("images").select("ocr_read_key").execute();
    expect(rows).toEqual([{ ocr_read_key: null }, { ocr_read_key: null }]);
  });
});

describe.each(dialects)("migration 030: possible duplicates in groups (%s)", (dialect) => {
  let t: TestDatabase;
  afterEach(() => t.drop());

  it("folds chains of copies onto their first image and regroups the copies of a deleted one under the oldest", async () => {
    t = await freshDatabase(dialect);
    const owner = await makeUser();
    const id = (await makeProject([{ actor: owner.actor, role: "manager" }])).id;
    await insertManyImages(await projectScope(owner.actor, id), 8, { first: 1, title: (i) => `Image ${i}` });
    const [a, b, c, d, e, f, g, h] = (await db().selectFrom("images").select("id").orderBy("id").execute()).map((r) => r.id);
    // As the code before it left them: c a copy of b, a copy of a (a chain three deep with d); e and f copies of an
    // image deleted since.
    const point = (copy: number, of: number) => db().updateTable("images").set({ dup_of: of }).where("id", "=", copy).execute();
    await point(b!, a!);
    await point(c!, b!);
    await point(d!, c!);
    await point(e!, 999_999);
    await point(f!, 999_999);
    // A chain whose first was deleted: h a copy of g, g of a deleted image.
    await point(g!, 888_888);
    await point(h!, g!);

    // As on a database from before the migration: its index gone, then the migration (and only it) run again.
    await sql`drop index images_dup_groups`.execute(db());
    await duplicateGroups().up(db());
    const rows = await db().selectFrom("images").select(["id", "dup_of"]).orderBy("id").execute();
    expect(rows.map((r) => [r.id, r.dup_of])).toEqual([
      [a, null],
      [b, a],
      [c, a],
      [d, a],
      [e, null],
      [f, e],
      [g, null],
      [h, g],
    ]);
  });
});
