import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoard } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { sessionCookie, startServer, type RunningServer } from "../helpers/server";

/**
 * POST /search/smart (spec 1's call) over real HTTP against the built server: the spec's answer for a member (a
 * viewer too: searching reads), 404 for a project or board outside the person's reach, 400 for a bad body, 401 signed
 * out, and the process stays up. (Malformed bodies on every action: hardening.test.ts.)
 */
const SESSION_SECRET = "smart-search-http-secret-0123456789abcdef";

describe.each(dialects)("POST /search/smart (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let viewerCookie: string;
  let projectId: number;
  let foreignProjectId: number;
  let foreignBoardId: string;
  const post = (body: unknown, cookie = viewerCookie, type = "application/json") =>
    fetch(`${server.base}/search/smart`, {
      method: "POST",
      headers: { Cookie: cookie, "Content-Type": type, Origin: server.base },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET, SMART_SEARCH_EMBEDDINGS: "false" });
    const owner = await makeUser();
    const viewer = await makeUser();
    const stranger = await makeUser();
    const project = await makeProject([{ actor: owner.actor }, { actor: viewer.actor, role: "viewer" }]);
    const foreign = await makeProject([{ actor: stranger.actor }]);
    projectId = project.id;
    foreignProjectId = foreign.id;
    await insertImage(await projectScope(owner.actor, projectId), await storedFakeFile(1), meta("Cans", ["Soda", "Grocery aisle"]));
    const theirs = await projectScope(stranger.actor, foreign.id);
    const secret = await insertImage(theirs, await storedFakeFile(2), meta("Secret", ["Kombucha"]));
    foreignBoardId = (await createBoard(theirs, { title: "Theirs", imageIds: [secret] })).id;
    viewerCookie = await sessionCookie(viewer.user.id);
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET, SMART_SEARCH_EMBEDDINGS: "false" });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  it("answers a member (a viewer) with the spec's description and tags, from the project's vocabulary or every project's", async () => {
    const res = await post({ search: "sodas in the grocery aisle", clientID: projectId });
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const body = (await res.json()) as { description: string; tags: string[] };
    expect(body.tags).toEqual(["Soda", "Grocery aisle"]);
    expect(body.description).toContain("Soda");
    const everywhere = (await (await post({ search: "kombucha and soda" })).json()) as { tags: string[] };
    expect(everywhere.tags).toEqual(["Soda"]); // never the stranger's Kombucha
  });

  it("answers 404 for a project or board outside the person's reach, 400 for a bad body, 401 signed out; the server stays up", async () => {
    expect((await post({ search: "kombucha", clientID: foreignProjectId })).status).toBe(404);
    expect((await post({ search: "kombucha", boardID: foreignBoardId })).status).toBe(404);
    expect((await post({ search: "kombucha", clientID: 99_999_999 })).status).toBe(404);
    for (const bad of [{}, { search: "   " }, { search: 42 }, { search: "x".repeat(5000) }, { search: "soda", clientID: "abc" }])
      expect((await post(bad)).status, JSON.stringify(bad)).toBe(400);
    expect((await post("{not json")).status).toBe(400);
    expect((await post({ search: "soda" }, "")).status).toBe(401);
    expect((await fetch(`${server.base}/search/smart`, { headers: { Cookie: viewerCookie } })).status).toBe(405);
    expect((await post({ search: "soda", clientID: projectId })).status).toBe(200);
  });
});
