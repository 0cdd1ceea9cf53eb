import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { createBoard, removeFromBoard } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { boardScope, projectScope, type BoardScope } from "~/models/scope.server";
import { createShareLinks, revokeShareLink } from "~/models/share-links.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { startServer, type RunningServer } from "../helpers/server";

/**
 * The shared-page cache over real HTTP against the built server (docs/decisions/0011): a repeat view comes from the
 * cache with its own nonce and the page's headers; a board change, a revocation or an expiry shows at once; every
 * view is counted; a visitor who reviews gets their own page, and nobody gets theirs.
 */
const SESSION_SECRET = "shared-page-cache-test-secret-0123456789abcdef";

describe.each(dialects)("the shared-page cache (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let board: BoardScope;
  const images: number[] = [];
  const thumbs = new Map<number, string>();

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.base}${path}`, { headers, redirect: "manual" });
  const post = (path: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${server.base}${path}`, {
      method: "POST",
      body: new URLSearchParams(body),
      headers: { Origin: server.base, ...headers },
      redirect: "manual",
    });
  const newLink = async (label: string) => {
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, label);
    return { id: link!.id, page: link!.path, url: link!.path.slice("/shared-board/".length) };
  };
  /** The page, with the CSP nonce of its header checked against every nonce in its HTML. */
  const page = async (path: string, headers: Record<string, string> = {}) => {
    const res = await get(path, headers);
    // React's text separators out, so that "Reviewing as {name}" reads as it shows.
    const html = (await res.text()).replaceAll("<!-- -->", "");
    const nonce = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy") ?? "")?.[1];
    const inHtml = [...html.matchAll(/nonce="([^"]*)"/g)].map((m) => m[1]);
    return { res, html, nonce, inHtml, normalised: html.replaceAll(nonce ?? "-", "NONCE") };
  };
  const views = async (id: number) =>
    Number((await db().selectFrom("share_links").select("views").where("id", "=", id).executeTakeFirstOrThrow()).views);

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    const editor = await makeUser();
    const project = await makeProject([{ actor: editor.actor }]);
    const scope = await projectScope(editor.actor, project.id);
    for (const i of [0, 1, 2]) {
      const file = await storedFakeFile(700 + i);
      const id = await insertImage(scope, file, meta(`Cached shelf ${i}`, ["cached"]));
      images.push(id);
      thumbs.set(id, file.thumbKey.replaceAll("/", "~"));
    }
    board = await boardScope(editor.actor, (await createBoard(scope, { title: "Cache board", imageIds: images })).id);
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET });
  });
  afterAll(async () => {
    await server?.stop();
    await t?.drop();
  });

  it("answers a repeat view from the cache, with a fresh nonce everywhere and the page's headers", async () => {
    const { page: path } = await newLink("repeat");
    const first = await page(path);
    const second = await page(path);
    for (const { res, nonce, inHtml } of [first, second]) {
      expect(res.status).toBe(200);
      expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(inHtml.length).toBeGreaterThan(0);
      expect(new Set(inHtml)).toEqual(new Set([nonce]));
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("x-robots-tag")).toContain("noindex");
      expect(res.headers.get("cache-control")).toBe("private, no-store");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    expect(second.nonce).not.toBe(first.nonce);
    expect(second.normalised).toBe(first.normalised);
    // Proof that it is the cache: a change behind the models' back (which moves no version) is not seen...
    await db().updateTable("images").set({ title: "Renamed behind the cache" }).where("id", "=", images[0]!).execute();
    expect((await page(path)).html).not.toContain("Renamed behind the cache");
    // ...and once the board's version moves on (as every model write does, see the next test), it is.
    await db()
      .updateTable("boards")
      .set({ updated_at: board.board.version + 1_000_000 })
      .where("id", "=", board.board.id)
      .execute();
    expect((await page(path)).html).toContain("Renamed behind the cache");
    // Compressed for a browser all the same.
    const gzip = await get(path, { "Accept-Encoding": "gzip" });
    expect(gzip.headers.get("content-encoding")).toBe("gzip");
    expect(await gzip.text()).toContain("Renamed behind the cache");
  });

  it("shows a board change at once, on a page already cached", async () => {
    const { page: path } = await newLink("change");
    const removed = images[2]!;
    expect((await page(path)).html).toContain(thumbs.get(removed));
    expect((await page(path)).html).toContain(thumbs.get(removed));
    await removeFromBoard(board, removed);
    const after = await page(path);
    expect(after.res.status).toBe(200);
    expect(after.html).not.toContain(thumbs.get(removed));
    expect(after.html).toContain(thumbs.get(images[1]!));
  });

  it("stops a revoked or expired link at once, cached or not", async () => {
    const revoked = await newLink("revoke");
    expect((await page(revoked.page)).res.status).toBe(200);
    expect((await page(revoked.page)).res.status).toBe(200);
    await revokeShareLink(board, revoked.id);
    const gone = await page(revoked.page);
    expect(gone.res.status).toBe(410);
    expect(gone.html).toContain("This link was revoked");
    expect(gone.html).not.toContain(thumbs.get(images[0]!));
    expect(gone.res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(gone.res.headers.get("cache-control")).toBe("private, no-store");

    const expired = await newLink("expire");
    expect((await page(expired.page)).res.status).toBe(200);
    expect((await page(expired.page)).res.status).toBe(200);
    await db()
      .updateTable("share_links")
      .set({ expires_at: Date.now() - 1000 })
      .where("id", "=", expired.id)
      .execute();
    const late = await page(expired.page);
    expect(late.res.status).toBe(410);
    expect(late.html).toContain("This link has expired");
  });

  it("counts every view of the page, cached ones too, and audits the day's first once; paging is not a view", async () => {
    const { id, page: path } = await newLink("views");
    for (let i = 0; i < 6; i++) expect((await get(path)).status).toBe(200);
    // Another page of the grid is not another view.
    expect((await get(`${path}?after=x&pos=60`)).status).toBe(200);
    // Views are written within a second (app/services/share-views.server.ts).
    await expect.poll(() => views(id), { timeout: 5000 }).toBe(6);
    const opened = await db()
      .selectFrom("audit_log")
      .select("detail")
      .where("action", "=", "share.opened")
      .execute()
      .then((rows) => rows.filter((r) => JSON.parse(String(r.detail)).link === id));
    expect(opened).toHaveLength(1);
  });

  it("gives a visitor who reviews their own marks, never a cached page, and never caches theirs for others", async () => {
    const { page: path } = await newLink("reviews");
    const image = `${path}/image/${images[0]}`;
    // Cached from here on (until the reviews below move the board's version on: the team's board shows them).
    expect((await page(path)).html).not.toContain("Reviewing as");
    const named = await post(image, { intent: "name", name: "Dana Client" });
    const dana = named.headers.get("set-cookie")!.split(";")[0]!;
    expect((await post(image, { intent: "review", mark: "approved" }, { Cookie: dana })).status).toBe(200);
    const other = (await post(image, { intent: "name", name: "Robin Other" })).headers.get("set-cookie")!.split(";")[0]!;
    expect((await post(image, { intent: "review", mark: "rejected" }, { Cookie: other })).status).toBe(200);

    const danas = await page(path, { Cookie: dana });
    expect(danas.html).toContain("Reviewing as Dana Client");
    expect(danas.html).toContain("review-approved");
    expect(danas.html).not.toContain("review-rejected");
    expect(new Set(danas.inHtml)).toEqual(new Set([danas.nonce]));
    const robins = await page(path, { Cookie: other });
    expect(robins.html).toContain("Reviewing as Robin Other");
    expect(robins.html).toContain("review-rejected");
    expect(robins.html).not.toContain("review-approved");
    // Dana's page again, after Robin's: still Dana's; and the anonymous page shows nobody's.
    expect((await page(path, { Cookie: dana })).html).toContain("Reviewing as Dana Client");
    const again = await page(path);
    expect(again.html).not.toContain("Reviewing as");
    expect(again.html).not.toMatch(/review-(approved|rejected)/);
  });

  it("leaves other requests to Remix: Remix's data requests, unknown query parameters, the image pages", async () => {
    const { url, page: path } = await newLink("others");
    expect((await get(`${path}?foo=1`)).status).toBe(200);
    expect((await get(`${path}.data`)).status).toBe(200);
    expect((await get(`${path}/image/${images[0]}`)).status).toBe(200);
    expect((await get(`/shared-board/${url.split(":")[0]}:${"x".repeat(43)}`)).status).toBe(404);
  });
});
