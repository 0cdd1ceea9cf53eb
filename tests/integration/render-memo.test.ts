import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertImage } from "~/models/images.server";
import { projectScope, type ProjectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { sessionCookie, startServer, type RunningServer } from "../helpers/server";

/**
 * Memoized renders over real HTTP against the built server (lib/render-memo.server.ts, docs/decisions/0018): a
 * repeat view of a page with the same data is answered from the earlier render with its own nonce; new data, another
 * person, an error page are rendered anew; RENDER_CACHE_MB=0 renders every view.
 */
const SESSION_SECRET = "render-memo-test-secret-0123456789abcdef";
const MEMO = 'render;desc="memo"';

describe.each(dialects)("memoized renders (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let scope: ProjectScope;
  let projectId: number;
  const cookies = { manager: "", viewer: "" };
  const emails = { manager: "", viewer: "" };

  /** The page, its nonce checked against every nonce in its HTML, and the HTML with the nonce taken out. */
  const page = async (path: string, who: keyof typeof cookies = "manager", base = server.base) => {
    const res = await fetch(`${base}${path}`, { headers: { Cookie: cookies[who] }, redirect: "manual" });
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
    for (const i of [0, 1, 2]) await insertImage(scope, await storedFakeFile(900 + i), meta(`Memo shelf ${i}`, ["memo"]));
    cookies.manager = await sessionCookie(manager.user.id);
    cookies.viewer = await sessionCookie(viewer.user.id);
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t?.drop();
  });

  it("answers a repeat view from the earlier render: the same page, with the request's own nonce everywhere", async () => {
    const path = `/client/${projectId}?view=repeat`;
    const first = await page(path);
    const second = await page(path);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.memo).toBe(false);
    expect(second.memo).toBe(true);
    expect(second.html).toContain("Memo shelf 2");
    expect(second.normalised).toBe(first.normalised);
    expect(second.nonce).not.toBe(first.nonce);
    for (const p of [first, second]) {
      expect(p.nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(p.inHtml).toEqual(new Set([p.nonce]));
    }
  });

  it("renders anew once the data changed: an image added since shows on the next view", async () => {
    const path = `/client/${projectId}?view=change`;
    await page(path);
    expect((await page(path)).memo).toBe(true);
    await insertImage(scope, await storedFakeFile(950), meta("Memo shelf added later", ["memo"]));
    const after = await page(path);
    expect(after.memo).toBe(false);
    expect(after.html).toContain("Memo shelf added later");
    expect((await page(path)).memo).toBe(true);
  });

  it("never answers one person with a page rendered for another", async () => {
    const path = `/client/${projectId}?view=people`;
    await page(path, "manager");
    expect((await page(path, "manager")).memo).toBe(true);
    const viewer = await page(path, "viewer");
    expect(viewer.status).toBe(200);
    expect(viewer.memo).toBe(false);
    expect(viewer.html).toContain(emails.viewer);
    expect(viewer.html).not.toContain(emails.manager);
  });

  it("renders an error page every time, and a page of another URL anew", async () => {
    const missing = `/client/${projectId + 1000}`;
    for (const _ of [1, 2]) {
      const p = await page(missing);
      expect(p.status).toBe(404);
      expect(p.memo).toBe(false);
    }
    await page(`/client/${projectId}?view=a`);
    expect((await page(`/client/${projectId}?view=b`)).memo).toBe(false);
  });

  it("renders every view with RENDER_CACHE_MB=0", async () => {
    const off = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET, RENDER_CACHE_MB: "0" });
    try {
      const path = `/client/${projectId}?view=off`;
      const views = [await page(path, "manager", off.base), await page(path, "manager", off.base)];
      expect(views.map((v) => [v.status, v.memo])).toEqual([
        [200, false],
        [200, false],
      ]);
      expect(views[1]!.normalised).toBe(views[0]!.normalised);
    } finally {
      await off.stop();
    }
  }, 60_000);
});
