import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import type { Similarity } from "~/lib/similarity";
import { insertImage } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { pageText, sessionCookie, startAppServer, type AppServer } from "../helpers/server";

/**
 * Possible duplicates over real HTTP against the built server, as its form posts without JavaScript: the list and
 * its Keep both for editors only; every malformed post a 400, another project's or a decided pair a 404, a viewer a
 * 403, a stranger the project's 404, each changing nothing.
 */
const print = (phash: string): Similarity => ({ phash, dhash: "0f0f0f0f0f0f0f0f", turned: [] });

describe.each(dialects)("possible duplicates over HTTP (%s)", (dialect) => {
  let t: TestDatabase;
  let server: AppServer;
  const cookies = { editor: "", viewer: "", stranger: "" };
  let projectId = 0;
  let copyId = 0;
  let originalId = 0;
  let foreignCopyId = 0;

  const post = (fields: Record<string, string> | FormData, who: keyof typeof cookies = "editor") =>
    fetch(`${server.base}/client/${projectId}/duplicates`, {
      method: "POST",
      redirect: "manual",
      headers: {
        Cookie: cookies[who],
        Origin: server.base,
        ...(fields instanceof FormData ? {} : { "Content-Type": "application/x-www-form-urlencoded" }),
      },
      body: fields instanceof FormData ? fields : new URLSearchParams(fields),
    });
  const get = (url: string, who: keyof typeof cookies = "editor") =>
    fetch(`${server.base}${url}`, { redirect: "manual", headers: { Cookie: cookies[who] } });
  const dupOf = async (id: number) =>
    (await db().selectFrom("images").select("dup_of").where("id", "=", id).executeTakeFirstOrThrow()).dup_of;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const editor = await makeUser();
    const viewer = await makeUser();
    const stranger = await makeUser();
    projectId = (
      await makeProject([
        { actor: editor.actor, role: "editor" },
        { actor: viewer.actor, role: "viewer" },
      ])
    ).id;
    const otherId = (await makeProject([{ actor: stranger.actor, role: "manager" }])).id;
    const scope = await projectScope(editor.actor, projectId);
    originalId = await insertImage(scope, { ...(await storedFakeFile(9_001)), similarity: print("0123456789abcdef") }, meta("Shelf"));
    copyId = await insertImage(scope, { ...(await storedFakeFile(9_002)), similarity: print("0123456789abcdee") }, meta("Shelf again"));
    const other = await projectScope(stranger.actor, otherId);
    await insertImage(other, { ...(await storedFakeFile(9_003)), similarity: print("7777777777777777") }, meta("Poster"));
    foreignCopyId = await insertImage(
      other,
      { ...(await storedFakeFile(9_004)), similarity: print("7777777777777776") },
      meta("Poster again"),
    );
    for (const [who, user] of [
      ["editor", editor],
      ["viewer", viewer],
      ["stranger", stranger],
    ] as const)
      cookies[who] = await sessionCookie(user.user.id);
    server = await startAppServer(t);
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  it("lists the group for the project's people (Keep both for editors only) and is the project's 404 for anyone else", async () => {
    expect(await dupOf(copyId)).toBe(originalId);
    expect(await dupOf(foreignCopyId)).not.toBeNull();
    const page = await pageText(await get(`/client/${projectId}/duplicates`));
    expect(page).toContain("Shelf again");
    expect(page).toContain("Keep both");
    const viewerPage = await pageText(await get(`/client/${projectId}/duplicates`, "viewer"));
    expect(viewerPage).toContain("Shelf again");
    expect(viewerPage).not.toContain("Keep both");
    expect((await get(`/client/${projectId}/duplicates`, "stranger")).status).toBe(404);
    // A cursor that is no id is the first page; a NUL is refused before any route (server/requests.ts).
    expect(await pageText(await get(`/client/${projectId}/duplicates?after=abc%ff`))).toContain("Shelf again");
    expect((await get(`/client/${projectId}/duplicates?after=%00`)).status).toBe(400);
  });

  it("answers every malformed post with a 400 and another project's image or an image without a look-alike with a 404, changing nothing", async () => {
    const file = new FormData();
    file.set("intent", "keep-both");
    file.set("image", new Blob(["x"]), "image.txt");
    const malformed: (Record<string, string> | FormData)[] = [
      {},
      { image: String(copyId) },
      { intent: "skip", image: String(copyId) },
      { intent: "keep-both" },
      { intent: "keep-both", image: "" },
      { intent: "keep-both", image: "abc" },
      { intent: "keep-both", image: "-1" },
      { intent: "keep-both", image: "1e3" },
      { intent: "keep-both", image: "99999999999999999999" },
      file,
    ];
    for (const fields of malformed) expect((await post(fields)).status, JSON.stringify(fields)).toBe(400);
    expect((await post({ intent: "keep-both", image: String(foreignCopyId) })).status).toBe(404);
    expect((await post({ intent: "keep-both", image: String(originalId) })).status).toBe(404);
    expect((await post({ intent: "keep-both", image: String(copyId) }, "viewer")).status).toBe(403);
    expect((await post({ intent: "keep-both", image: String(copyId) }, "stranger")).status).toBe(404);
    expect(await dupOf(copyId)).toBe(originalId);
    expect(await dupOf(foreignCopyId)).not.toBeNull();
  });

  it("Keep both takes the upload out of its group with a toast, once: the upload decided is then a 404", async () => {
    const kept = await post({ intent: "keep-both", image: String(copyId) });
    expect(kept.status).toBe(302);
    expect(kept.headers.get("location")).toBe(`/client/${projectId}/duplicates`);
    expect(await dupOf(copyId)).toBeNull();
    // The toast rides on the redirect's cookie, and the page it leads to says it.
    const toast = kept.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const page = await pageText(
      await fetch(`${server.base}/client/${projectId}/duplicates`, { headers: { Cookie: `${cookies.editor}; ${toast}` } }),
    );
    expect(page).toContain("Both images kept");
    expect(page).toContain("No possible duplicates in this project.");
    expect((await post({ intent: "keep-both", image: String(copyId) })).status).toBe(404);
  });
});
