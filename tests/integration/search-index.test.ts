import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, dialect as currentDialect } from "~/db/connection.server";
import { foldTable } from "~/db/migrations/009-keyword-search.server";
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

describe.each(dialects.filter((d) => d === "postgres"))("koala_fold's fast path (%s)", (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(() => t.drop());

  /** Migration 009's fold, the reference: recompose, lower case, then the accent and punctuation table. */
  const reference = (text: string) => {
    const { from, to } = foldTable();
    return sql<{ folded: string }>`select translate(lower(normalize(${text}::text, NFC)), ${sql.raw(from)}, ${sql.raw(to)}) as folded`;
  };

  it("folds every character of U+0001–U+024F and the typographic marks as migration 009's table did", async () => {
    const chars = [
      ...Array.from({ length: 0x24f }, (_, i) => String.fromCodePoint(i + 1)),
      ..."\u00a0\u2010\u2013\u2014\u2018\u2019\u201c\u201d\u2026",
    ];
    // Each character alone (ASCII ones take the fast path), inside ASCII words, and all at once (the table's path).
    const texts = [...chars, ...chars.map((c) => `Shelf${c}London 4${c}99`), chars.join(""), "Shelf photo, London: 2-for-1 (SALE) 9.99!"];
    for (const text of texts) {
      const got = (await sql<{ folded: string }>`select koala_fold(${text}::text) as folded`.execute(db())).rows[0]!.folded;
      const want = (await reference(text).execute(db())).rows[0]!.folded;
      expect({ text, got }).toEqual({ text, got: want });
    }
  });

  it("leaves the search documents of stored images as they were", async () => {
    const { actor } = await makeUser();
    const scope = await projectScope(actor, (await makeProject([{ actor }])).id);
    const id = await insertImage(scope, await storedFakeFile(12), meta("Café in São Paulo: 2-for-1!", ["crème", "e-mail"], "ÉTÉ 50%"));
    const { from, to } = foldTable();
    const doc = await sql<{ same: boolean }>`select s.doc = (
        setweight(to_tsvector('simple', translate(lower(normalize(i.title || ' ' || i.keywords, NFC)), ${sql.raw(from)}, ${sql.raw(to)})), 'A') ||
        setweight(to_tsvector('simple', translate(lower(normalize(i.description || ' ' || i.ocr_text, NFC)), ${sql.raw(from)}, ${sql.raw(to)})), 'B') ||
        setweight(to_tsvector('simple', translate(lower(normalize(i.original_name, NFC)), ${sql.raw(from)}, ${sql.raw(to)})), 'C')) as same
      from images i join image_search s on s.image_id = i.id where i.id = ${id}`.execute(db());
    expect(doc.rows[0]?.same).toBe(true);
  });
});
