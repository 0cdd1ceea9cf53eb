import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, dialect as currentDialect } from "~/db/connection.server";
import { insertImage } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

/** Ids matching a full-text query, straight from the index (the search feature builds on this). */
async function match(term: string): Promise<number[]> {
  if (currentDialect() === "postgres") {
    const r = await sql<{
      id: number;
    }>`select image_id as id from image_search where doc @@ plainto_tsquery('simple', ${term}) order by image_id`.execute(db());
    return r.rows.map((x) => x.id);
  }
  const r = await sql<{ id: number }>`select rowid as id from images_fts where images_fts match ${`"${term}"`} order by rowid`.execute(
    db(),
  );
  return r.rows.map((x) => Number(x.id));
}

describe.each(dialects)("full-text index (%s)", (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(() => t.drop());

  it("covers title, description, keywords, OCR and file name, and follows updates and deletes", async () => {
    const { actor } = await makeUser();
    const p = await makeProject([{ actor }]);
    const scope = await projectScope(actor, p.id);
    const a = await insertImage(scope, await storedFakeFile(10), meta("Shelf in Leeds", ["beverage", "promo"], "SALE 9.99"));
    const b = await insertImage(scope, await storedFakeFile(11), meta("Poster", ["outdoor"], "OPEN LATE"));
    expect(await match("leeds")).toEqual([a]);
    expect(await match("promo")).toEqual([a]);
    expect(await match("late")).toEqual([b]);
    expect(await match("about")).toEqual([a, b]); // description
    expect(await match("poster")).toEqual([b]); // also the file name, "Poster.jpg"
    expect(await match("jpg")).toEqual([a, b]);

    await db()
      .updateTable("images")
      .set({ title: "Poster in Perth", keywords: JSON.stringify(["perth"]) })
      .where("id", "=", b)
      .execute();
    expect(await match("perth")).toEqual([b]);
    expect(await match("outdoor")).toEqual([]);

    await db().deleteFrom("image_versions").where("image_id", "=", a).execute();
    await db().deleteFrom("images").where("id", "=", a).execute();
    expect(await match("leeds")).toEqual([]);
  });
});
