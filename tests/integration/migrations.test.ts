import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { migrateToLatest } from "~/db/migrations.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";

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
