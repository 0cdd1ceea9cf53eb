import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { insertImage } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { sessionCookie, startServer, type RunningServer } from "../helpers/server";

/**
 * An image's pages resolve the image, its project and the role they need in one call (web/scopes.server.ts
 * imageScopeOf): over real HTTP, an editor's writes are taken, a viewer's are refused with a 403, anyone outside the
 * project and any id that is not one get a 404, a malformed body a 4xx, and the image is still there after each.
 */
const SESSION_SECRET = "image-routes-http-secret-0123456789abcdef";

describe.each(dialects)("an image's pages over HTTP (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  const cookies: Record<"editor" | "viewer" | "stranger", string> = { editor: "", viewer: "", stranger: "" };
  let imageId: number;
  const send = (url: string, who: keyof typeof cookies, body?: string) =>
    fetch(`${server.base}${url}`, {
      method: body === undefined ? "GET" : "POST",
      redirect: "manual",
      headers: {
        Cookie: cookies[who],
        ...(body === undefined ? {} : { "Content-Type": "application/x-www-form-urlencoded", Origin: server.base }),
      },
      body,
    });

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    const editor = await makeUser();
    const viewer = await makeUser();
    const stranger = await makeUser();
    const project = await makeProject([
      { actor: editor.actor, role: "editor" },
      { actor: viewer.actor, role: "viewer" },
    ]);
    await makeProject([{ actor: stranger.actor, role: "manager" }]);
    imageId = await insertImage(await projectScope(editor.actor, project.id), await storedFakeFile(700), meta("Shelf"));
    cookies.editor = await sessionCookie(editor.user.id);
    cookies.viewer = await sessionCookie(viewer.user.id);
    cookies.stranger = await sessionCookie(stranger.user.id);
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  const stillThere = async () => (await db().selectFrom("images").select("id").where("id", "=", imageId).executeTakeFirst())?.id;

  it("answers an editor, refuses a viewer's writes with 403, and gives a stranger and a bad id 404", async () => {
    const writes = [`/image/${imageId}/attributes`, `/image/${imageId}/pin`, `/image/${imageId}/delete`];
    for (const url of writes) {
      expect((await send(url, "editor")).status, url).toBe(200);
      expect((await send(url, "viewer")).status, url).toBe(403);
      expect((await send(url, "stranger")).status, url).toBe(404);
      expect((await send(url.replace(String(imageId), "abc"), "editor")).status, url).toBe(404);
      expect((await send(url.replace(String(imageId), "99999999999"), "editor")).status, url).toBe(404);
    }
    // The image page itself: any member reads it.
    expect((await send(`/image/${imageId}`, "viewer")).status).toBe(200);
    expect((await send(`/image/${imageId}`, "stranger")).status).toBe(404);
    expect(await stillThere()).toBe(imageId);
  });

  it("takes no write from a viewer, a stranger or a malformed body, and stays up", async () => {
    for (const [url, body] of [
      [`/image/${imageId}/delete`, "step=2&confirm=DELETE"],
      [`/image/${imageId}`, "title=Taken&version=1"],
      [`/image/${imageId}/attributes/1/remove`, "confirm=REMOVE"],
    ] as const) {
      expect((await send(url, "viewer", body)).status, url).toBeGreaterThanOrEqual(400);
      expect((await send(url, "stranger", body)).status, url).toBe(404);
    }
    for (const body of ["%zz=%", "step=2&confirm=" + "x".repeat(100_000), "\u0000\u0001"])
      expect((await send(`/image/${imageId}/delete`, "editor", body)).status).toBeLessThan(500);
    expect(await stillThere()).toBe(imageId);
    expect((await db().selectFrom("images").select("title").where("id", "=", imageId).executeTakeFirst())?.title).toBe("Shelf");
    expect((await send(`/image/${imageId}`, "editor")).status).toBe(200);
  });
});
