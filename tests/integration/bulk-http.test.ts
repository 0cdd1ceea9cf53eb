import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { SHARED_BOARD_WARNING } from "~/lib/bulk-ops";
import { NEW_BOARD } from "~/lib/schemas";
import { createBoard, TARGET_GONE } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { pageText, sessionCookie, startAppServer, type AppServer } from "../helpers/server";

/**
 * The bulk actions' one table over real HTTP, as forms post them without JavaScript: which view offers which action
 * to whom, and the client-level board's confirmation asked by one rule (the board written to, or the one a move or
 * removal starts from) before anything is made, a new board included.
 */
describe.each(dialects)("bulk actions over HTTP (%s)", (dialect) => {
  let t: TestDatabase;
  let server: AppServer;
  const cookies = { editor: "", viewer: "" };
  let projectId: number;
  let images: number[];
  let review: string; // client-level, holds every image
  let plain: string; // an ordinary board, empty
  let selection: string;

  const send = (url: string, who: keyof typeof cookies, fields?: Record<string, string>) =>
    fetch(`${server.base}${url}`, {
      method: fields ? "POST" : "GET",
      redirect: "manual",
      headers: {
        Cookie: [cookies[who], selection].filter(Boolean).join("; "),
        ...(fields ? { "Content-Type": "application/x-www-form-urlencoded", Origin: server.base } : {}),
      },
      body: fields ? new URLSearchParams(fields) : undefined,
    });
  const boardTitles = async () =>
    (await db().selectFrom("boards").select("title").where("project_id", "=", projectId).orderBy("title").execute()).map((b) => b.title);
  const onBoard = async (boardId: string) =>
    (await db().selectFrom("board_images").select("image_id").where("board_id", "=", boardId).orderBy("image_id").execute()).map(
      (r) => r.image_id,
    );
  const boardId = async (title: string) =>
    (await db().selectFrom("boards").select("id").where("project_id", "=", projectId).where("title", "=", title).executeTakeFirstOrThrow())
      .id;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const editor = await makeUser();
    const viewer = await makeUser();
    const project = await makeProject([
      { actor: editor.actor, role: "editor" },
      { actor: viewer.actor, role: "viewer" },
    ]);
    projectId = project.id;
    const scope = await projectScope(editor.actor, projectId);
    images = [];
    for (let i = 0; i < 3; i++) images.push(await insertImage(scope, await storedFakeFile(500 + i), meta(`Aisle ${i}`)));
    review = (await createBoard(scope, { title: "Client review", imageIds: images, clientBoard: true })).id;
    plain = (await createBoard(scope, { title: "Alpha" })).id;
    cookies.editor = await sessionCookie(editor.user.id);
    cookies.viewer = await sessionCookie(viewer.user.id);
    server = await startAppServer(t);
    const selected = await send(`/${projectId}/board/${review}`, "editor", { intent: "select-all" });
    expect(selected.status).toBe(302);
    selection = selected.headers
      .getSetCookie()
      .find((c) => c.startsWith("koala_selection"))!
      .split(";")[0]!;
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  it("offers each view its own actions: a board's Move page is found, a project's action on a board and an unknown one are not, and a viewer may read but not write", async () => {
    const base = `/${projectId}/board/${review}/bulk`;
    expect(await pageText(await send(`${base}/move`, "editor"))).toContain("Move to another board");
    expect((await send(`${base}/add`, "editor")).status).toBe(404);
    expect((await send(`${base}/delete`, "editor")).status).toBe(404);
    expect((await send(`${base}/nonsense`, "editor")).status).toBe(404);
    expect((await send(`${base}/download`, "viewer")).status).toBe(200);
    expect((await send(`${base}/move`, "viewer")).status).toBe(403);
    expect((await send(`${base}/move`, "viewer", { target: plain, confirmShared: "yes" })).status).toBe(403);
    // A read action's page has no form of its own here: its files come from …/bulk/zip and …/bulk/csv.
    expect((await send(`${base}/download`, "editor", {})).status).toBe(404);
    expect(await onBoard(review)).toEqual(images);
    expect(await onBoard(plain)).toEqual([]);
  });

  it("asks before a move from a client-level board to a new board, and makes no board until it is confirmed", async () => {
    const url = `/${projectId}/board/${review}/bulk/move`;
    const asked = await send(url, "editor", { target: NEW_BOARD, newBoard: "Shortlist" });
    expect(asked.status).toBe(400);
    expect(await pageText(asked)).toContain(SHARED_BOARD_WARNING);
    expect(await boardTitles()).toEqual(["Alpha", "Client review"]);
    expect(await onBoard(review)).toEqual(images);

    const bad = await send(url, "editor", { target: NEW_BOARD, newBoard: "x", confirmShared: "yes" });
    expect(bad.status).toBe(400);
    expect(await boardTitles()).toEqual(["Alpha", "Client review"]);

    const done = await send(url, "editor", { target: NEW_BOARD, newBoard: "Shortlist", confirmShared: "yes" });
    expect(done.status).toBe(302);
    expect(await boardTitles()).toEqual(["Alpha", "Client review", "Shortlist"]);
    expect(await onBoard(await boardId("Shortlist"))).toEqual(images);
    expect(await onBoard(review)).toEqual([]);
  });

  it("asks before copying to a client-level board, not to an ordinary one; a board deleted since the page was drawn is named at its field", async () => {
    const shortlist = await boardId("Shortlist");
    const from = `/${projectId}/board/${shortlist}`;
    const picked = await send(from, "editor", { intent: "select-all" });
    selection = picked.headers
      .getSetCookie()
      .find((c) => c.startsWith("koala_selection"))!
      .split(";")[0]!;
    const toReview = await send(`${from}/bulk/copy`, "editor", { target: review });
    expect(toReview.status).toBe(400);
    expect(await pageText(toReview)).toContain(SHARED_BOARD_WARNING);
    expect(await onBoard(review)).toEqual([]);
    expect((await send(`${from}/bulk/copy`, "editor", { target: review, confirmShared: "yes" })).status).toBe(302);
    expect(await onBoard(review)).toEqual(images);

    expect((await send(`${from}/bulk/copy`, "editor", { target: plain })).status).toBe(302);
    expect(await onBoard(plain)).toEqual(images);

    const gone = await send(`${from}/bulk/copy`, "editor", { target: "no-such-board" });
    expect(gone.status).toBe(404);
    expect(await pageText(gone)).toContain(TARGET_GONE);
  });
});
