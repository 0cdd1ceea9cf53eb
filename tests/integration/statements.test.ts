import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { StatementCache } from "~/db/statements.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";

/**
 * Statements built once and run with each call's values (app/db/statements.server.ts): each call gets its own rows,
 * a new database gets statements of its own, and a builder that does not place every value as a parameter is refused.
 */
const cache = new StatementCache();
const projectNamed = (id: number) =>
  cache.rows("project name", [id], (d, projectId: number) => d.selectFrom("projects").select(["id", "name"]).where("id", "=", projectId));

describe.each(dialects)("statements built once (%s)", (dialect) => {
  let t: TestDatabase;
  let ids: number[];

  beforeAll(async () => {
    // A database per dialect, one after the other in this process: the second must not run the first's statements.
    t = await freshDatabase(dialect);
    const owner = await makeUser();
    ids = [];
    for (let i = 0; i < 3; i++) ids.push((await makeProject([{ actor: owner.actor }])).id);
  });
  afterAll(() => t.drop());

  it("runs the one statement with each call's values", async () => {
    for (const id of ids) {
      const expected = await db().selectFrom("projects").select(["id", "name"]).where("id", "=", id).execute();
      expect(await projectNamed(id)).toEqual(expected);
    }
    expect(await projectNamed(-1)).toEqual([]);
  });

  it("fills several slots in the order the statement holds them, not the order they were given", async () => {
    const between = (hi: number, lo: number) =>
      cache.rows("projects between", [hi, lo], (d, top: number, bottom: number) =>
        d.selectFrom("projects").select("id").where("id", ">=", bottom).where("id", "<=", top).orderBy("id"),
      );
    expect((await between(ids[1]!, ids[0]!)).map((r) => r.id)).toEqual([ids[0], ids[1]]);
    expect((await between(ids[2]!, ids[2]!)).map((r) => r.id)).toEqual([ids[2]]);
  });

  it("refuses a builder that uses a value to decide the statement rather than as a parameter", async () => {
    const decided = new StatementCache();
    await expect(
      decided.rows("decided", [ids[0]!], (d, id: number) =>
        d
          .selectFrom("projects")
          .select("id")
          .$if(id === ids[0], (q) => q.where("id", "=", 1)),
      ),
    ).rejects.toThrow(/not parameters/);
  });
});
