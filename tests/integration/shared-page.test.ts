import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { sha256 } from "~/lib/crypto.server";
import { createBoard, removeFromBoard } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { boardScope, projectScope, type BoardScope } from "~/models/scope.server";
import { createShareLinks, revokeShareLink } from "~/models/share-links.server";
import { storage } from "~/services/storage.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { startServer, type RunningServer } from "../helpers/server";

/**
 * The public side of a share link over real HTTP against the built server: the page and its headers, read-only
 * refusals, the media access matrix, the JSON endpoint, the ZIP, and a visitor's review.
 */
const SESSION_SECRET = "shared-page-test-secret-0123456789abcdef0123";
const HOSTILE_TITLE = `<script>alert("board")</script> & Co`;

describe.each(dialects)("the shared board over HTTP (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let board: BoardScope;
  let full: string; // downloads allowed, metadata shown
  let viewOnly: string; // no downloads, no metadata
  const images: number[] = [];
  let onOtherBoard: number;
  let foreignImage: number;
  const keys = new Map<number, { thumb: string; original: string }>();

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.base}${path}`, { headers, redirect: "manual" });
  const post = (path: string, body: Record<string, string | string[]>, headers: Record<string, string> = {}) => {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) for (const one of [v].flat()) form.append(k, one);
    return fetch(`${server.base}${path}`, {
      method: "POST",
      body: form,
      headers: { Origin: server.base, ...headers },
      redirect: "manual",
    });
  };
  const media = (url: string, id: number, key: string) => `/shared-media/${url}/${id}/${key.replaceAll("/", "~")}`;
  const counts = async () => ({
    onBoard: (await db().selectFrom("board_images").select("image_id").where("board_id", "=", board.board.id).execute()).length,
    reviews: (await db().selectFrom("share_reviews").select("id").execute()).length,
    images: (await db().selectFrom("images").select("id").execute()).length,
  });

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    const editor = await makeUser();
    const stranger = await makeUser();
    const project = await makeProject([{ actor: editor.actor }]);
    const scope = await projectScope(editor.actor, project.id);
    const bytes = await jpeg(32, 24);
    const store = async (i: number, title: string, into = scope) => {
      const file = { ...(await storedFakeFile(400 + i)), sizeBytes: bytes.length };
      for (const key of [file.storageKey, file.thumbKey, file.previewKey]) await storage().put(key, bytes);
      const id = await insertImage(into, file, meta(title, ["secret-keyword"]));
      keys.set(id, { thumb: file.thumbKey, original: file.storageKey });
      return id;
    };
    images.push(await store(0, "Shelf one"), await store(1, "Shelf two"));
    onOtherBoard = await store(2, "Internal only");
    const foreign = await makeProject([{ actor: stranger.actor }]);
    foreignImage = await store(3, "Foreign", await projectScope(stranger.actor, foreign.id));
    board = await boardScope(editor.actor, (await createBoard(scope, { title: HOSTILE_TITLE, imageIds: images })).id);
    await createBoard(scope, { title: "Team internal board", imageIds: [onOtherBoard] });
    const [a] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "full");
    const [b] = await createShareLinks(board, [null], { expiry: "30", allowDownload: false, showMetadata: false }, "view only");
    full = a!.path.slice("/shared-board/".length);
    viewOnly = b!.path.slice("/shared-board/".length);
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET });
  });
  afterAll(async () => {
    await server?.stop();
    await t?.drop();
  });

  it("serves the page without a session: no referrer, not indexed, not stored, no cookie, the title escaped everywhere", async () => {
    const res = await get(`/shared-board/${full}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-robots-tag")).toContain("noindex");
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.headers.get("set-cookie")).toBeNull();
    const html = await res.text();
    expect(html).not.toContain(`<script>alert("board")`);
    expect(html).toMatch(/<title>&lt;script&gt;alert\(&quot;board&quot;\)&lt;\/script&gt; &amp; Co \| Koala<\/title>/);
    for (const id of images) expect(html).toContain(media(full, id, keys.get(id)!.thumb));
    expect(html).not.toContain("Team internal board");
    expect(html).not.toContain("Internal only");
    expect(html).not.toContain("/dashboard");
  });

  it("shows images only for a link without metadata: no titles or keywords on the page or in its JSON", async () => {
    const html = await (await get(`/shared-board/${viewOnly}`)).text();
    expect(html).not.toContain("Shelf one");
    expect(html).not.toContain("secret-keyword");
    const json = await (await get(`/shared/board/get?sharedUrl=${encodeURIComponent(viewOnly)}`)).text();
    expect(json).not.toContain("Shelf one");
    expect(json).not.toContain("secret-keyword");
  });

  it("answers 404 'Invalid URL' for an unknown or malformed link and another board's id; 410 for a revoked one", async () => {
    const token = full.split(":")[1]!;
    for (const url of ["nope", `${board.board.id}:${"x".repeat(43)}`, `other-board:${token}`, encodeURIComponent(`${full}'"<>`)]) {
      const res = await get(`/shared-board/${url}`);
      expect(res.status, url).toBe(404);
      expect(await res.text()).toContain("The URL is invalid");
    }
    const [gone] = await createShareLinks(board, [null], { expiry: "7", allowDownload: true, showMetadata: true }, "to revoke");
    const url = gone!.path.slice("/shared-board/".length);
    expect((await get(`/shared-board/${url}`)).status).toBe(200);
    await revokeShareLink(board, gone!.id);
    const res = await get(`/shared-board/${url}`);
    expect(res.status).toBe(410);
    expect(await res.text()).toContain("This link was revoked");
    expect((await get(media(url, images[0]!, keys.get(images[0]!)!.thumb))).status).toBe(404);
    const json = await get(`/shared/board/get?sharedUrl=${encodeURIComponent(url)}`);
    expect(json.status).toBe(410);
    // The JSON refusal keeps the share answers' headers (its body names who to ask: not for proxies or indexes).
    expect(json.headers.get("referrer-policy")).toBe("no-referrer");
    expect(json.headers.get("x-robots-tag")).toContain("noindex");
    expect(json.headers.get("cache-control")).toContain("no-store");
  });

  it("never writes a link's token to the log: a refused request logs the path with the token masked", async () => {
    const res = await fetch(`${server.base}/shared-board/${full}/image/${images[0]}`, {
      method: "POST",
      body: "{broken",
      headers: { "Content-Type": "application/json", Origin: server.base },
    });
    expect(res.status).toBe(400);
    // The link's whole segment masked, as on its access-log line.
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain(`"path":"/shared-board/[token]/image/${images[0]}"`);
    expect(server.output()).not.toContain(full.split(":")[1]!);
    expect(server.output()).not.toContain(viewOnly.split(":")[1]!);
  });

  it("refuses every write: selection, pin, remove, delete and edit posts change nothing", async () => {
    const before = await counts();
    const page = `/shared-board/${full}`;
    const image = `${page}/image/${images[0]}`;
    for (const intent of ["select-all", "deselect-all", "update", "bulk:delete"])
      expect((await post(page, { intent, ids: String(images[0]) })).status, intent).toBeGreaterThanOrEqual(400);
    for (const intent of ["pin", "remove", "delete", "edit", "rotate", "attributes"])
      expect((await post(image, { intent, board: board.board.id })).status, intent).toBe(400);
    // A review before the visitor gave a name is refused too.
    expect((await post(image, { intent: "review", mark: "approved" })).status).toBe(400);
    for (const path of [`${page}/bulk/delete`, `${page}/remove/${images[0]}`, `${page}/edit`, `${page}/delete`])
      expect((await post(path, { intent: "delete" })).status, path).toBe(404);
    expect(await counts()).toEqual(before);
  });

  it("serves media for images on the board only; originals only when downloads are allowed; removal cuts off at once", async () => {
    const [first, second] = images as [number, number];
    const thumb = await get(media(full, first, keys.get(first)!.thumb));
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("referrer-policy")).toBe("no-referrer");
    expect((await get(media(full, first, keys.get(first)!.original))).status).toBe(200);
    expect((await get(media(viewOnly, first, keys.get(first)!.thumb))).status).toBe(200);
    expect((await get(media(viewOnly, first, keys.get(first)!.original))).status).toBe(404);
    // Another image's key, an image on another board of the project, an image of another project.
    expect((await get(media(full, first, keys.get(onOtherBoard)!.thumb))).status).toBe(404);
    expect((await get(media(full, onOtherBoard, keys.get(onOtherBoard)!.thumb))).status).toBe(404);
    expect((await get(media(full, foreignImage, keys.get(foreignImage)!.thumb))).status).toBe(404);
    expect((await get(`/shared-board/${full}/image/${onOtherBoard}`)).status).toBe(404);
    expect((await get(`/shared-board/${full}/image/${foreignImage}`)).status).toBe(404);
    await removeFromBoard(board, second);
    expect((await get(media(full, second, keys.get(second)!.thumb))).status).toBe(404);
    expect((await get(`/shared-board/${full}/image/${second}`)).status).toBe(404);
    await db()
      .insertInto("board_images")
      .values({ board_id: board.board.id, image_id: second, added_at: Date.now(), added_by: null })
      .execute();
    expect((await get(media(full, second, keys.get(second)!.thumb))).status).toBe(200);
  });

  it("refuses a Host header that carries a path, so no request can render (or cache) another page under a link", async () => {
    const raw = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${server.base}/shared-board/${full}`, { headers: { Host: host } }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        req.end();
      });
    for (const host of [`x/login?`, `x/shared-board/${viewOnly}?`, "x#y"]) expect((await raw(host)).status, host).toBe(400);
    const page = await get(`/shared-board/${full}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Shelf one"); // the full link's own page (the view-only one shows no titles)
  });

  it("downloads only originals, only where allowed, named only where metadata is shown; a thumbnail is never a download", async () => {
    const [first] = images as [number];
    const downloads = async (url: string) =>
      Number(
        (
          await db()
            .selectFrom("share_links")
            .select("downloads")
            .where("token_hash", "=", sha256(url.split(":")[1]!))
            .executeTakeFirstOrThrow()
        ).downloads,
      );
    const before = await downloads(viewOnly);
    const thumb = await get(`${media(viewOnly, first, keys.get(first)!.thumb)}?download`);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("content-disposition")).toBeNull();
    expect(await downloads(viewOnly)).toBe(before);
    const original = await get(`${media(full, first, keys.get(first)!.original)}?download`);
    expect(original.headers.get("content-disposition")).toContain("Shelf one.jpg");
  });

  it("feeds the virtual grid JSON scoped to the token, with ETag and 304", async () => {
    const res = await get(`/shared/board/get?sharedUrl=${encodeURIComponent(full)}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { cards: { id: number }[]; total: number };
    expect(body.total).toBe(2);
    expect(body.cards.map((c) => c.id).sort()).toEqual([...images].sort());
    const etag = res.headers.get("etag")!;
    expect((await get(`/shared/board/get?sharedUrl=${encodeURIComponent(full)}`, { "If-None-Match": etag })).status).toBe(304);
    expect((await get(`/shared/board/get?sharedUrl=nope`)).status).toBe(404);
  });

  it("downloads the board as a ZIP when the link allows it; refuses a link without downloads and any id not on the board", async () => {
    const zip = await post(`/shared-board/${full}/zip`, { all: "1" });
    expect(zip.status).toBe(200);
    expect(zip.headers.get("content-type")).toBe("application/zip");
    const bytes = Buffer.from(await zip.arrayBuffer());
    expect(bytes.subarray(0, 2).toString()).toBe("PK");
    expect(bytes.length).toBe(Number(zip.headers.get("content-length")));
    expect((await post(`/shared-board/${viewOnly}/zip`, { all: "1" })).status).toBe(404);
    expect((await post(`/shared-board/${full}/zip`, { ids: [String(images[0]), String(onOtherBoard)] })).status).toBe(404);
    expect((await post(`/shared-board/${full}/zip`, { ids: [String(foreignImage)] })).status).toBe(404);
    expect((await post(`/shared-board/${full}/zip`, { ids: [String(images[0])] })).status).toBe(200);
    // Malformed selections are a clear 400, never a 500.
    for (const ids of [Array.from({ length: 101 }, (_, i) => String(i + 1)), ["abc"], ["-1"]])
      expect((await post(`/shared-board/${full}/zip`, { ids })).status, ids.slice(0, 2).join()).toBe(400);
  });

  it("takes a visitor's name once, then their mark and comment, kept as text", async () => {
    const image = `/shared-board/${full}/image/${images[0]}`;
    const named = await post(image, { intent: "name", name: "Dana Client" });
    expect(named.status).toBe(302);
    expect(named.headers.get("location")).toBe(image);
    const cookie = named.headers.get("set-cookie")!.split(";")[0]!;
    expect(cookie).toMatch(/^koala_visitor=/);
    const hostile = `<img src=x onerror="alert(1)"> looks good`;
    const reviewed = await post(image, { intent: "review", mark: "approved", comment: hostile }, { Cookie: cookie });
    expect(reviewed.status).toBe(200);
    const row = await db().selectFrom("share_reviews").selectAll().where("image_id", "=", images[0]!).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ visitor_name: "Dana Client", mark: "approved", comment: hostile });
    const html = await (await get(image, { Cookie: cookie })).text();
    expect(html).not.toContain(`<img src=x`);
    expect(html).toContain("Dana Client");
    // What Chromium sends from the page itself under no-referrer: Origin null, vouched for by Sec-Fetch-Site.
    const fromPage = await post(
      image,
      { intent: "review", mark: "rejected" },
      { Cookie: cookie, Origin: "null", "Sec-Fetch-Site": "same-origin" },
    );
    expect(fromPage.status).toBe(200);
    expect((await post(image, { intent: "review", mark: "approved" }, { Cookie: cookie, Origin: "null" })).status).toBe(403);
    expect((await post(image, { intent: "review", mark: "approved" }, { Cookie: cookie, "Sec-Fetch-Site": "cross-site" })).status).toBe(
      403,
    );
    expect((await db().selectFrom("share_reviews").select("mark").where("image_id", "=", images[0]!).executeTakeFirstOrThrow()).mark).toBe(
      "rejected",
    );
    const tooLong = await post(image, { intent: "review", comment: "x".repeat(501) }, { Cookie: cookie });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.text()).toContain("A comment can be at most 500 characters.");
  });
});
