import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { createToken } from "~/models/api-tokens.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { startAppServer, type RunningServer } from "../helpers/server";
import { clientTypes } from "../client/generate";
import { shelfScript } from "../client/shelf-script";

/**
 * A generated client against the real server: the types openapi-typescript makes from the served document are the
 * committed ones the script is compiled against (so the script breaks when the API does), and the script does a
 * team's whole job with a token: upload three photos, tag them, find them, put them on a board, share it, read it.
 */
describe.each(dialects)("a script on the generated API client (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let projectId: number;
  let token: string;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const person = await makeUser();
    projectId = (await makeProject([{ actor: person.actor, role: "editor" }])).id;
    token = (await createToken(person.actor, { name: "shelf script", write: true, projects: [projectId], days: 7 })).secret;
    server = await startAppServer(t);
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  it("has the types openapi-typescript generates from the served document (regenerate: npx tsx tests/client/generate.ts)", async () => {
    const served = await (await fetch(`${server.base}/api/v1/openapi.json`)).json();
    expect(await clientTypes(served)).toBe(readFileSync("tests/client/koala-api.d.ts", "utf8"));
  });

  it("uploads three photos, tags them, finds them, boards them, shares the board, reads the share link and fetches a photo back", async () => {
    const photos = await Promise.all(["#aa2222", "#22aa22", "#2222aa"].map((c) => jpeg(90, 60, c)));
    const result = await shelfScript(server.base, token, projectId, photos);
    expect(result.imageIds).toHaveLength(3);
    expect([...result.found].sort()).toEqual([...result.imageIds].sort());
    const stored = await db()
      .selectFrom("images")
      .select(["title", "keywords"])
      .where("project_id", "=", projectId)
      .orderBy("id")
      .execute();
    expect(stored).toEqual([1, 2, 3].map((n) => ({ title: `Shelf photo ${n}`, keywords: JSON.stringify(["planogram", "store14"]) })));
    const pinned = await db().selectFrom("board_images").select("image_id").where("board_id", "=", result.boardId).execute();
    expect(pinned.map((p) => p.image_id).sort()).toEqual([...result.imageIds].sort());
    expect(result.shareUrl).toContain(`/shared-board/${result.boardId}:`);
    expect(result.sharedPage).toContain("Store 14 planogram");
    expect(result.sharedPage).toContain("Shelf photo 2");
    expect(Buffer.from(result.original).equals(Buffer.from(photos[0]!))).toBe(true);
  });
});
