import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoard } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { projectScope, type ProjectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { sessionCookie, startServer, type RunningServer } from "../helpers/server";

/**
 * Memoized renders over real HTTP against the built server (web/render-memo.server.ts, docs/decisions/0018): a
 * repeat view of a page with the same data is answered from the earlier render with its own nonce; new data, another
 * session, an error page, a visitor without cookies get a render of their own; a memoized page is what a fresh render
 * gives, on every signed-in page of the sweep; RENDER_CACHE_MB=0 renders every view.
 */
const SESSION_SECRET = "render-memo-test-secret-0123456789abcdef";
const MEMO = 'render;desc="memo"';

describe.each(dialects)("memoized renders (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let scope: ProjectScope;
  let projectId: number;
  const cookies = { manager: "", viewer: "", managerAgain: "", none: "" };
  let boardId: string;
  let imageId: number;
  const emails = { manager: "", viewer: "" };

  /** The page, its nonce checked against every nonce in its HTML, and the HTML with the nonce taken out. */
  const page = async (path: string, who: keyof typeof cookies = "manager", base = server.base) => {
    const res = await fetch(`${base}${path}`, { headers: cookies[who] ? { Cookie: cookies[who] } : {}, redirect: "manual" });
    const html = await res.text();
    const nonce = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy") ?? "")?.[1] ?? "";
    const inHtml = new Set([...html.matchAll(/nonce="([^"]*)"/g)].map((m) => m[1]));
    return {
      status: res.status,
      html,
      nonce,
      inHtml,
      memo: res.headers.get("server-timing") === MEMO,
      normalised: html.replaceAll(nonce, "NONCE"),
    };
  };

  /** Two views of a page, both rendered: the first notes it, the second renders it and keeps it. */
  const seenTwice = async (path: string, who: keyof typeof cookies = "manager") => {
    const views = [await page(path, who), await page(path, who)];
    expect(
      views.map((v) => [v.status, v.memo]),
      path,
    ).toEqual([
      [200, false],
      [200, false],
    ]);
  };

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    const manager = await makeUser();
    const viewer = await makeUser();
    emails.manager = manager.user.email;
    emails.viewer = viewer.user.email;
    const project = await makeProject([
      { actor: manager.actor, role: "manager" },
      { actor: viewer.actor, role: "viewer" },
    ]);
    projectId = project.id;
    scope = await projectScope(manager.actor, projectId);
    const ids: number[] = [];
    for (const i of [0, 1, 2]) ids.push(await insertImage(scope, await storedFakeFile(900 + i), meta(`Memo shelf ${i}`, ["memo"])));
    imageId = ids[0]!;
    boardId = (await createBoard(scope, { title: "Memo board", imageIds: ids })).id;
    cookies.manager = await sessionCookie(manager.user.id);
    cookies.managerAgain = await sessionCookie(manager.user.id);
    cookies.viewer = await sessionCookie(viewer.user.id);
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t?.drop();
  });

  it("keeps a page the second time it is seen and answers the next views from it, each with its own nonce everywhere", async () => {
    const path = `/client/${projectId}?view=repeat`;
    const [first, second, third] = [await page(path), await page(path), await page(path)];
    expect([first, second, third].map((p) => [p.status, p.memo])).toEqual([
      [200, false],
      [200, false],
      [200, true],
    ]);
    expect(third.html).toContain("Memo shelf 2");
    expect(second.normalised).toBe(first.normalised);
    expect(third.normalised).toBe(first.normalised);
    expect(new Set([first.nonce, second.nonce, third.nonce]).size).toBe(3);
    for (const p of [first, second, third]) {
      expect(p.nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(p.inHtml).toEqual(new Set([p.nonce]));
    }
  });

  it("renders anew once the data changed: an image added since shows on the next view", async () => {
    const path = `/client/${projectId}?view=change`;
    await seenTwice(path);
    expect((await page(path)).memo).toBe(true);
    await insertImage(scope, await storedFakeFile(950), meta("Memo shelf added later", ["memo"]));
    const after = await page(path);
    expect(after.memo).toBe(false);
    expect(after.html).toContain("Memo shelf added later");
    expect((await page(path)).memo).toBe(false);
    expect((await page(path)).memo).toBe(true);
  });

  it("keeps a render to its session: another person, or the same person signed in elsewhere, gets a render of their own", async () => {
    const path = `/client/${projectId}?view=people`;
    await seenTwice(path, "manager");
    expect((await page(path, "manager")).memo).toBe(true);
    const again = await page(path, "managerAgain");
    expect(again.status).toBe(200);
    expect(again.memo).toBe(false);
    expect(again.html).toContain(emails.manager);
    const viewer = await page(path, "viewer");
    expect(viewer.status).toBe(200);
    expect(viewer.memo).toBe(false);
    expect(viewer.html).toContain(emails.viewer);
    expect(viewer.html).not.toContain(emails.manager);
  });

  it("renders every view for a visitor without cookies", async () => {
    for (const _ of [1, 2, 3]) {
      const p = await page("/login", "none");
      expect(p.status).toBe(200);
      expect(p.memo).toBe(false);
    }
  });

  it("sends a page whole, with its length and no chunked encoding, whether rendered or from the memo", async () => {
    const path = `/client/${projectId}?view=whole`;
    /** Raw HTTP without Accept-Encoding (fetch asks for gzip): the headers as the server wrote them, and the body's bytes. */
    const raw = () =>
      new Promise<{ headers: http.IncomingHttpHeaders; bytes: number }>((resolve, reject) => {
        http
          .get(`${server.base}${path}`, { headers: { Cookie: cookies.manager } }, (res) => {
            let bytes = 0;
            res.on("data", (chunk: Buffer) => (bytes += chunk.length));
            res.on("end", () => resolve({ headers: res.headers, bytes }));
          })
          .on("error", reject);
      });
    for (const view of [1, 2, 3]) {
      const { headers, bytes } = await raw();
      expect(headers["transfer-encoding"], `view ${view}`).toBeUndefined();
      expect(Number(headers["content-length"]), `view ${view}`).toBe(bytes);
      expect(bytes).toBeGreaterThan(1000);
      expect(headers["server-timing"] === MEMO).toBe(view === 3);
    }
  });

  it("answers a HEAD by rendering, never from the memo, and without a body", async () => {
    const path = `/client/${projectId}?view=head`;
    await seenTwice(path);
    expect((await page(path)).memo).toBe(true);
    const res = await fetch(`${server.base}${path}`, { method: "HEAD", headers: { Cookie: cookies.manager } });
    expect(res.status).toBe(200);
    expect(res.headers.get("server-timing")).toBeNull();
    expect(await res.text()).toBe("");
  });

  it("renders an error page every time, and a page of another URL anew", async () => {
    const missing = `/client/${projectId + 1000}`;
    for (const _ of [1, 2, 3]) {
      const p = await page(missing);
      expect(p.status).toBe(404);
      expect(p.memo).toBe(false);
    }
    await seenTwice(`/client/${projectId}?view=a`);
    expect((await page(`/client/${projectId}?view=b`)).memo).toBe(false);
  });

  it("answers every signed-in page of the sweep from memory with exactly what a fresh render gives; RENDER_CACHE_MB=0 renders every view", async () => {
    const off = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET, RENDER_CACHE_MB: "0" });
    try {
      const sweep = [
        `/client/${projectId}`,
        `/client/${projectId}?q=memo`,
        `/${projectId}/board/${boardId}`,
        `/image/${imageId}?from=${encodeURIComponent(`/client/${projectId}`)}`,
        `/result/keyword/memo`,
        "/dashboard",
        "/all-boards",
        "/all-clients",
        `/upload/${projectId}/attributes`,
        "/profile",
      ];
      for (const path of sweep) {
        await seenTwice(path);
        const memoized = await page(path);
        const fresh = [await page(path, "manager", off.base), await page(path, "manager", off.base)];
        expect([memoized.status, memoized.memo], path).toEqual([200, true]);
        expect(
          fresh.map((v) => [v.status, v.memo]),
          path,
        ).toEqual([
          [200, false],
          [200, false],
        ]);
        expect(memoized.normalised, path).toBe(fresh[1]!.normalised);
      }
    } finally {
      await off.stop();
    }
  }, 90_000);
});
