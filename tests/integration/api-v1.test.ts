import { randomBytes } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { sha256 } from "~/lib/crypto.server";
import { setUserStatus } from "~/models/admin-users.server";
import { createToken, MAX_WORKING_TOKENS, myTokens, revokeToken, TOO_MANY_TOKENS } from "~/models/api-tokens.server";
import { createBoard } from "~/models/boards.server";
import { insertImageRows } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { BULK_INLINE_MAX } from "~/services/bulk.server";
import { storeImageFile } from "~/services/image-files.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { fakeFile, insertManyImages, makeProject, makeUser, meta } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { apiChecker, type ApiChecker } from "../helpers/openapi";
import { pageText, sessionCookie, startAppServer, type RunningServer } from "../helpers/server";

/**
 * The public API over real HTTP against the built server, every answer checked against the OpenAPI document it
 * serves (tests/helpers/openapi.ts): the access matrix of two people's tokens over their projects (read and write
 * tokens, a token narrowed to one project, expired, revoked, none), the database unchanged by every refusal, bad
 * input, the rate limit, paging, and tokens made and revoked on the profile page.
 */
const SESSION_SECRET = "api-v1-test-secret-0123456789abcdef0123456";
const RATE = 120;

describe.each(dialects)("public API /api/v1 (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let api: ApiChecker;
  let token: string | null = null;
  const as = async <T>(secret: string | null, work: () => Promise<T>) => {
    const before = token;
    token = secret;
    try {
      return await work();
    } finally {
      token = before;
    }
  };
  const call = (path: string, init?: RequestInit) => api.call(path, init);
  const send = (path: string, method: string, body: unknown) =>
    call(path, { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

  const ids = { p1: 0, p2: 0, p3: 0, b1: "", b2: "", b3: "", i1: 0, i2: 0, i3: 0, real: 0 };
  const tokens = { aliceWrite: "", aliceRead: "", aliceP1: "", bobWrite: "", expired: "", revoked: "" };
  let alice: Awaited<ReturnType<typeof makeUser>>;
  let aliceCookie: string;

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    alice = await makeUser();
    const bob = await makeUser();
    const carol = await makeUser();
    // Alice manages P1 and views P2; Bob edits P2; P3 is Carol's alone.
    const p1 = await makeProject([{ actor: alice.actor, role: "manager" }]);
    const p2 = await makeProject([
      { actor: bob.actor, role: "editor" },
      { actor: alice.actor, role: "viewer" },
    ]);
    const p3 = await makeProject([{ actor: carol.actor, role: "manager" }]);
    Object.assign(ids, { p1: p1.id, p2: p2.id, p3: p3.id });
    const seed = async (actor: typeof alice.actor, projectId: number, offset: number, titles: string[]) => {
      const scope = await projectScope(actor, projectId);
      await insertImageRows(
        scope,
        titles.map((title, i) => ({
          file: fakeFile(offset + i),
          meta: meta(title, ["shelf", `kw${i}`]),
          at: 1_700_000_000_000 + (offset + i) * 1000,
        })),
      );
      const [first] = await db().selectFrom("images").select("id").where("project_id", "=", projectId).orderBy("id").execute();
      return { scope, image: first!.id };
    };
    const s1 = await seed(alice.actor, p1.id, 0, ["Tea aisle", "Coffee aisle", "Milk shelf", "Bread shelf", "Tea end cap"]);
    const s2 = await seed(bob.actor, p2.id, 100, ["Beta one", "Beta two", "Beta three"]);
    const s3 = await seed(carol.actor, p3.id, 200, ["Gamma"]);
    Object.assign(ids, { i1: s1.image, i2: s2.image, i3: s3.image });
    // One image with real files (in the DATA_DIR the server shares), for rotation.
    const real = await storeImageFile(await jpeg(64, 48));
    await insertImageRows(s1.scope, [{ file: real, meta: meta("Real photo", ["real"]), at: 1_600_000_000_000 }]);
    ids.real = (await db().selectFrom("images").select("id").where("checksum", "=", real.checksum).executeTakeFirstOrThrow()).id;
    ids.b1 = (await createBoard(s1.scope, { title: "Alpha board" })).id;
    ids.b2 = (await createBoard(s2.scope, { title: "Beta board" })).id;
    ids.b3 = (await createBoard(s3.scope, { title: "Gamma board" })).id;

    const make = async (who: typeof alice.actor, input: Partial<Parameters<typeof createToken>[1]> = {}, at?: number) =>
      (await createToken(who, { name: "t", write: true, projects: null, days: 30, ...input }, at)).secret;
    tokens.aliceWrite = await make(alice.actor);
    tokens.aliceRead = await make(alice.actor, { write: false });
    tokens.aliceP1 = await make(alice.actor, { projects: [p1.id] });
    tokens.bobWrite = await make(bob.actor);
    tokens.expired = await make(alice.actor, { days: 7 }, Date.now() - 8 * 86_400_000);
    const revoked = await createToken(alice.actor, { name: "gone", write: true, projects: null, days: 30 });
    await revokeToken(alice.actor, revoked.id);
    tokens.revoked = revoked.secret;
    aliceCookie = await sessionCookie(alice.user.id);

    server = await startAppServer(t, { SESSION_SECRET, API_RATE_LIMIT_PER_MINUTE: String(RATE) });
    api = await apiChecker(server.base, () => token);
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  /** Everything a refused request could have changed. */
  const boardsNow = async () => ({
    boards: await db().selectFrom("boards").select(["id", "title", "project_id", "cover_image_id"]).orderBy("id").execute(),
    pins: await db().selectFrom("board_images").select(["board_id", "image_id"]).orderBy("board_id").orderBy("image_id").execute(),
    images: await db().selectFrom("images").select(["id", "version", "title", "keywords", "rotation"]).orderBy("id").execute(),
    links: await db().selectFrom("share_links").select(["id", "revoked_at"]).orderBy("id").execute(),
  });

  /** Every operation of the document, for one project's ids, as [method, path, body]. */
  const operations = (p: number, b: string, i: number): [string, string, unknown?][] => [
    ["GET", "/projects"],
    ["GET", `/projects/${p}`],
    ["GET", `/projects/${p}/images`],
    ["GET", `/images/${i}`],
    ["GET", `/projects/${p}/boards`],
    ["GET", `/boards/${b}`],
    ["GET", `/projects/${p}/attributes`],
    ["POST", `/projects/${p}/export.csv`],
    ["POST", `/projects/${p}/boards`, { title: "Refused board" }],
    ["PATCH", `/boards/${b}`, { title: "Refused name" }],
    ["DELETE", `/boards/${b}`],
    ["PATCH", `/images/${i}`, { title: "Refused title" }],
    ["POST", `/images/${i}/rotate`, { degrees: 90 }],
    ["DELETE", `/images/${i}`],
    ["POST", `/boards/${b}/images`, { imageIds: [i] }],
    ["POST", `/boards/${b}/images/remove`, { imageIds: [i] }],
    ["POST", `/boards/${b}/images/copy`, { imageIds: [i], targetBoardId: b }],
    ["POST", `/boards/${b}/images/move`, { imageIds: [i], targetBoardId: b }],
    ["GET", `/boards/${b}/share-links`],
    ["POST", `/boards/${b}/share-links`, { label: "Refused link" }],
    ["DELETE", `/boards/${b}/share-links/999999`],
    ["POST", `/projects/${p}/attributes`, { name: "Refused" }],
    ["POST", `/projects/${p}/attributes/999999/values`, { imageIds: [i], value: "x" }],
    ["POST", `/projects/${p}/uploads`, { fileName: "refused.jpg" }],
    ["POST", `/projects/${p}/images`, { key: "uploads/refused" }],
    ["POST", `/projects/${p}/files`, { files: [] }],
    ["POST", `/projects/${p}/images/bulk`, { imageIds: [i], action: { op: "keywords", keywords: ["refused"] } }],
    ["POST", `/projects/${p}/images/bulk?q=shelf`, { all: true, action: { op: "delete" } }],
  ];
  const run = ([method, path, body]: [string, string, unknown?]) =>
    body === undefined ? call(path, { method }) : send(path, method, body);

  it("serves a valid OpenAPI 3.1 document that lists every operation the routes answer", async () => {
    expect(api.doc.openapi).toBe("3.1.0");
    const listed = Object.entries(api.doc.paths!).flatMap(([path, item]) =>
      Object.keys(item!)
        .filter((k) => ["get", "post", "patch", "delete", "put"].includes(k))
        .map((m) => `${m} ${path}`),
    );
    expect(listed.sort()).toEqual(
      [
        "get /projects",
        "get /projects/{projectId}",
        "get /projects/{projectId}/images",
        "get /images/{imageId}",
        "get /projects/{projectId}/boards",
        "post /projects/{projectId}/boards",
        "get /boards/{boardId}",
        "patch /boards/{boardId}",
        "delete /boards/{boardId}",
        "patch /images/{imageId}",
        "post /images/{imageId}/rotate",
        "delete /images/{imageId}",
        "post /boards/{boardId}/images",
        "post /boards/{boardId}/images/remove",
        "post /boards/{boardId}/images/copy",
        "post /boards/{boardId}/images/move",
        "get /boards/{boardId}/share-links",
        "post /boards/{boardId}/share-links",
        "delete /boards/{boardId}/share-links/{linkId}",
        "get /projects/{projectId}/attributes",
        "post /projects/{projectId}/attributes",
        "post /projects/{projectId}/attributes/{attributeId}/values",
        "post /projects/{projectId}/uploads",
        "post /projects/{projectId}/images",
        "post /projects/{projectId}/files",
        "post /projects/{projectId}/export.csv",
        "get /images/{imageId}/file",
        "post /projects/{projectId}/images/bulk",
        "get /jobs/{jobId}",
      ].sort(),
    );
  });

  it("answers 401 to every operation without a token, with a wrong, expired or revoked one, or with a session cookie alone", async () => {
    const before = await boardsNow();
    for (const secret of [null, "koala_pat_nonsense", "not-even-a-token", tokens.expired, tokens.revoked]) {
      for (const op of operations(ids.p1, ids.b1, ids.i1)) {
        const { res, body } = await as(secret, () => run(op));
        expect(res.status, `${op[0]} ${op[1]} with ${secret}`).toBe(401);
        expect(res.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="koala"/);
        expect(body.detail).toMatch(/token/);
      }
    }
    const withCookie = await fetch(`${server.base}/api/v1/projects`, { headers: { Cookie: aliceCookie } });
    expect(withCookie.status).toBe(401);
    expect(await boardsNow()).toEqual(before);
  });

  it("never lets a token in on the pages: a bearer token alone on a page is a visitor sent to sign in", async () => {
    for (const path of ["/dashboard", `/client/${ids.p1}`, "/profile/tokens"]) {
      const res = await fetch(`${server.base}${path}`, { redirect: "manual", headers: { Authorization: `Bearer ${tokens.aliceWrite}` } });
      expect(res.status, path).toBe(302);
      expect(res.headers.get("Location")).toMatch(/^\/login/);
    }
  });

  it("answers 404 to everything of a project outside the token's reach, and changes nothing", async () => {
    const before = await boardsNow();
    const cases: [string, number, string, number][] = [
      [tokens.aliceWrite, ids.p3, ids.b3, ids.i3], // not a member
      [tokens.bobWrite, ids.p1, ids.b1, ids.i1], // not a member
      [tokens.aliceP1, ids.p2, ids.b2, ids.i2], // a member, but the token lists P1 only
    ];
    for (const [secret, p, b, i] of cases)
      for (const op of operations(p, b, i).slice(1)) {
        const { res, body } = await as(secret, () => run(op));
        expect(res.status, `${op[0]} ${op[1]}`).toBe(404);
        expect(res.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
        expect(body.detail).not.toMatch(/Gamma|Beta|Alpha/);
      }
    expect(await boardsNow()).toEqual(before);
    // The narrowed token's project list holds P1 only; Bob's holds his own.
    const listed = await as(tokens.aliceP1, () => call("/projects"));
    expect(listed.body.items.map((p: { id: number }) => p.id)).toEqual([ids.p1]);
    const bobs = await as(tokens.bobWrite, () => call("/projects"));
    expect(bobs.body.items.map((p: { id: number }) => p.id)).toEqual([ids.p2]);
  });

  it("reads with any token in reach, and refuses writes with 403 to a read-only token and to a viewer's, changing nothing", async () => {
    const before = await boardsNow();
    for (const [secret, p, b, i] of [
      [tokens.aliceRead, ids.p1, ids.b1, ids.i1],
      [tokens.aliceWrite, ids.p2, ids.b2, ids.i2], // Alice only views P2
    ] as const) {
      const ops = operations(p, b, i);
      for (const op of ops.slice(0, 8)) expect((await as(secret, () => run(op))).res.status, `${op[0]} ${op[1]}`).toBe(200);
      for (const op of ops.slice(8)) {
        const { res, body } = await as(secret, () => run(op));
        expect(res.status, `${op[0]} ${op[1]}`).toBe(403);
        expect(body.detail).toMatch(/can view this (project|board) but not change it/);
      }
    }
    expect(await boardsNow()).toEqual(before);
    const project = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}`));
    expect(project.body).toMatchObject({ id: ids.p1, role: "viewer", canEdit: false, imageCount: 6 });
    // An editor is not a manager: attributes are made by managers.
    const editor = await as(tokens.bobWrite, () => send(`/projects/${ids.p2}/attributes`, "POST", { name: "Nope" }));
    expect(editor.res.status).toBe(403);
    expect(editor.body.detail).toBe("You can edit this project but not manage it.");
  });

  it("makes, renames and deletes a board with a write token, each write in the audit log", async () => {
    const made = await as(tokens.aliceWrite, () =>
      send(`/projects/${ids.p1}/boards`, "POST", { title: "  Made   by script ", imageIds: [ids.i1] }),
    );
    expect(made.res.status).toBe(201);
    expect(made.body).toMatchObject({ projectId: ids.p1, title: "Made by script", clientBoard: false });
    expect(made.res.headers.get("Location")).toBe(`/api/v1/boards/${made.body.id}`);
    expect(await db().selectFrom("board_images").select("image_id").where("board_id", "=", made.body.id).execute()).toEqual([
      { image_id: ids.i1 },
    ]);
    const renamed = await as(tokens.aliceWrite, () => send(`/boards/${made.body.id}`, "PATCH", { title: "Renamed by script" }));
    expect(renamed.body.title).toBe("Renamed by script");
    expect((await as(tokens.aliceWrite, () => call(`/boards/${made.body.id}`))).body.title).toBe("Renamed by script");
    const taken = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/boards`, "POST", { title: "alpha BOARD" }));
    expect(taken.res.status).toBe(409);
    expect(taken.body.detail).toBe("Board name already exists");
    const gone = await as(tokens.aliceWrite, () => call(`/boards/${made.body.id}`, { method: "DELETE" }));
    expect(gone.res.status).toBe(204);
    expect((await as(tokens.aliceWrite, () => call(`/boards/${made.body.id}`))).res.status).toBe(404);
    const audit = await db()
      .selectFrom("audit_log")
      .select(["actor_user_id", "detail"])
      .where("action", "=", "api.write")
      .where("detail", "like", `%${made.body.id}%`)
      .orderBy("id")
      .execute();
    expect(audit.map((a) => JSON.parse(a.detail).method)).toEqual(["PATCH", "DELETE"]);
    expect(audit.every((a) => a.actor_user_id === alice.user.id)).toBe(true);
  });

  it("pages a project's images by keyset cursor, filters them like the grid, and answers 304 while nothing changed", async () => {
    const seen: number[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const query: string = `/projects/${ids.p1}/images?limit=2${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      const { body } = await as(tokens.aliceRead, () => call(query));
      seen.push(...body.items.map((i: { id: number }) => i.id));
      after = body.next;
      pages += 1;
    } while (after && pages < 10);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(6);
    const tea = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/images?q=tea`));
    expect(tea.body.items.map((i: { title: string }) => i.title).sort()).toEqual(["Tea aisle", "Tea end cap"]);
    expect(tea.body.items[0].keywords).toEqual(["shelf", expect.stringMatching(/^kw/)]);
    const etag = tea.res.headers.get("ETag")!;
    const again = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/images?q=tea`, { headers: { "If-None-Match": etag } }));
    expect(again.res.status).toBe(304);
    const image = await as(tokens.aliceRead, () => call(`/images/${ids.i1}`));
    expect(image.body).toMatchObject({ id: ids.i1, projectId: ids.p1, title: "Tea aisle", keywords: ["shelf", "kw0"] });
    expect(image.res.headers.get("ETag")).toMatch(new RegExp(`^"v${image.body.version}-[0-9a-f]{12}"$`));
  });

  it("refuses bad input with a problem document and changes nothing", async () => {
    const before = await boardsNow();
    const path = `/projects/${ids.p1}/boards`;
    const post = (body: string, type = "application/json", extra: Record<string, string> = {}) =>
      as(tokens.aliceWrite, () => call(path, { method: "POST", headers: { "Content-Type": type, ...extra }, body }));
    const cases: [Awaited<ReturnType<typeof post>>, number, RegExp][] = [
      [await post("title=Form+board", "application/x-www-form-urlencoded"), 415, /Send JSON/],
      [await post("just text", "text/plain"), 415, /Send a form|JSON/],
      [await post('{"title": "Broken'), 400, /Data format error/],
      [await post(JSON.stringify({ title: 5 })), 400, /Expected string/],
      [await post(JSON.stringify({ title: "ab" })), 400, /^Board name must be 3 to 64 characters$/],
      [await post(JSON.stringify({ title: "Fine (name)" })), 400, /cannot contain/],
      [await post(JSON.stringify({ title: "Fine name", colour: "red" })), 400, /Unknown field: colour/],
      [await post(JSON.stringify({ title: "Fine name", imageIds: [ids.i3] })), 404, /Image not found/],
      [await post(JSON.stringify({ title: "Fine name", imageIds: "1,2" })), 400, /Expected array/],
      [await post(JSON.stringify(["Fine name"])), 400, /Expected object/],
      [await post(JSON.stringify({ title: "x".repeat(2 * 1024 * 1024) })), 413, /too large/],
    ];
    for (const [{ res, body }, status, detail] of cases) {
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
      expect(body.detail).toMatch(detail);
    }
    const wrongType = cases[3]![0].body;
    expect(wrongType.errors).toEqual([{ pointer: "/title", detail: expect.stringMatching(/Expected string/) }]);
    const badQuery = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/images?limit=5000`));
    expect(badQuery.res.status).toBe(400);
    const badCursor = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/images?after=nonsense`));
    expect(badCursor.res.status).toBe(400);
    const unknownParam = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/images?limt=5`));
    expect(unknownParam.res.status).toBe(400);
    const wrongMethod = await as(tokens.aliceRead, () => call("/projects", { method: "POST" }));
    expect(wrongMethod.res.status).toBe(405);
    expect(wrongMethod.res.headers.get("Allow")).toBe("GET");
    const nowhere = await as(tokens.aliceRead, () => call("/no/such/thing"));
    expect(nowhere.res.status).toBe(404);
    expect(await boardsNow()).toEqual(before);
    expect(server.output()).not.toContain("api error");
  });

  it("changes an image's metadata as a new version under If-Match, refuses a stale one with 412, rotates, and deletes", async () => {
    const read = await as(tokens.aliceWrite, () => call(`/images/${ids.real}`));
    const tag = read.res.headers.get("ETag")!;
    const saved = await as(tokens.aliceWrite, () =>
      call(`/images/${ids.real}`, {
        method: "PATCH",
        headers: { "Content-Type": "application/json", "If-Match": tag },
        body: JSON.stringify({ title: "  Real photo, renamed ", keywords: ["Shelf", "shelf", "price tag"] }),
      }),
    );
    expect(saved.res.status).toBe(200);
    expect(saved.body).toMatchObject({ title: "Real photo, renamed", keywords: ["Shelf", "price tag"], version: read.body.version + 1 });
    expect(saved.body.description).toBe(read.body.description); // left out: kept
    expect(saved.res.headers.get("ETag")).toMatch(new RegExp(`^"v${saved.body.version}-`));

    const before = await boardsNow();
    const stale = await as(tokens.aliceWrite, () =>
      call(`/images/${ids.real}`, {
        method: "PATCH",
        headers: { "Content-Type": "application/json", "If-Match": tag },
        body: JSON.stringify({ title: "Lost update" }),
      }),
    );
    expect(stale.res.status).toBe(412);
    expect(stale.body.detail).toMatch(/changed by someone else/);
    const badKeyword = await as(tokens.aliceWrite, () => send(`/images/${ids.real}`, "PATCH", { keywords: ["ok", "a"] }));
    expect(badKeyword.res.status).toBe(400);
    expect(badKeyword.body.detail).toBe('Keyword "a" should be at least 2 characters long');
    const badDegrees = await as(tokens.aliceWrite, () => send(`/images/${ids.real}/rotate`, "POST", { degrees: 45 }));
    expect(badDegrees.res.status).toBe(400);
    const staleDelete = await as(tokens.aliceWrite, () => call(`/images/${ids.real}`, { method: "DELETE", headers: { "If-Match": tag } }));
    // A weak tag never matches (If-Match compares strongly).
    const weak = await as(tokens.aliceWrite, () =>
      call(`/images/${ids.real}`, {
        method: "PATCH",
        headers: { "Content-Type": "application/json", "If-Match": `W/${saved.res.headers.get("ETag")}` },
        body: JSON.stringify({ title: "Weak" }),
      }),
    );
    expect(weak.res.status).toBe(412);
    expect(staleDelete.res.status).toBe(412);
    expect(await boardsNow()).toEqual(before);

    const rotated = await as(tokens.aliceWrite, () =>
      call(`/images/${ids.real}/rotate`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "If-Match": saved.res.headers.get("ETag")! },
        body: JSON.stringify({ degrees: 90 }),
      }),
    );
    expect(rotated.res.status).toBe(200);
    expect(rotated.body).toMatchObject({ rotation: 90, version: saved.body.version + 1, title: "Real photo, renamed" });
    const versions = await db()
      .selectFrom("image_versions")
      .select("changes")
      .where("image_id", "=", ids.real)
      .orderBy("version")
      .execute();
    expect(versions.map((v) => JSON.parse(v.changes))).toEqual([["title", "keywords"], ["rotated to 90°"]]);

    const gone = await as(tokens.aliceWrite, () =>
      call(`/images/${ids.real}`, { method: "DELETE", headers: { "If-Match": rotated.res.headers.get("ETag")! } }),
    );
    expect(gone.res.status).toBe(204);
    expect((await as(tokens.aliceWrite, () => call(`/images/${ids.real}`))).res.status).toBe(404);
  });

  it("adds images to a board, skips those already on it, copies, moves and removes them, and checks every id", async () => {
    const p1Images = (await db().selectFrom("images").select("id").where("project_id", "=", ids.p1).orderBy("id").execute()).map(
      (r) => r.id,
    );
    const [a, b, c] = p1Images;
    const board = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/boards`, "POST", { title: "Ops board" }));
    const other = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/boards`, "POST", { title: "Ops target" }));
    const pinsOf = async (board: string) =>
      (await db().selectFrom("board_images").select("image_id").where("board_id", "=", board).orderBy("image_id").execute()).map(
        (r) => r.image_id,
      );
    const add = await as(tokens.aliceWrite, () => send(`/boards/${board.body.id}/images`, "POST", { imageIds: [a, b] }));
    expect(add.body).toEqual({ affected: 2, skipped: 0 });
    const again = await as(tokens.aliceWrite, () => send(`/boards/${board.body.id}/images`, "POST", { imageIds: [b, c] }));
    expect(again.body).toEqual({ affected: 1, skipped: 1 });

    // One id outside the project (or not on the board) refuses the whole request, naming it; nothing changes.
    const before = await boardsNow();
    const foreign = await as(tokens.aliceWrite, () => send(`/boards/${board.body.id}/images`, "POST", { imageIds: [a, ids.i2] }));
    expect(foreign.res.status).toBe(404);
    expect(foreign.body.errors).toEqual([{ pointer: "/imageIds/1", detail: `No image ${ids.i2} here` }]);
    const notOnBoard = await as(tokens.aliceWrite, () => send(`/boards/${other.body.id}/images/remove`, "POST", { imageIds: [a] }));
    expect(notOnBoard.res.status).toBe(404);
    const elsewhere = await as(tokens.aliceWrite, () =>
      send(`/boards/${board.body.id}/images/copy`, "POST", { imageIds: [a], targetBoardId: ids.b2 }),
    );
    expect(elsewhere.res.status).toBe(404);
    expect(elsewhere.body.detail).toBe("Board ID not found, please refresh!");
    expect(await boardsNow()).toEqual(before);

    const copied = await as(tokens.aliceWrite, () =>
      send(`/boards/${board.body.id}/images/copy`, "POST", { imageIds: [a], targetBoardId: other.body.id }),
    );
    expect(copied.body).toEqual({ affected: 1, skipped: 0 });
    const moved = await as(tokens.aliceWrite, () =>
      send(`/boards/${board.body.id}/images/move`, "POST", { imageIds: [a, b], targetBoardId: other.body.id }),
    );
    expect(moved.body).toEqual({ affected: 2, skipped: 1 });
    const removed = await as(tokens.aliceWrite, () => send(`/boards/${board.body.id}/images/remove`, "POST", { imageIds: [c] }));
    expect(removed.body).toEqual({ affected: 1, skipped: 0 });
    expect(await pinsOf(board.body.id)).toEqual([]);
    expect(await pinsOf(other.body.id)).toEqual([a, b].sort((x, y) => x! - y!));
  });

  it("shares a board through a link that works at once, lists it with its views, and revokes it", async () => {
    const made = await as(tokens.aliceWrite, () =>
      send(`/boards/${ids.b1}/share-links`, "POST", { label: "Client deck", expiry: "7", allowDownload: false }),
    );
    expect(made.res.status).toBe(201);
    expect(made.body).toMatchObject({ label: "Client deck", allowDownload: false, showMetadata: true, revokedAt: null, views: 0 });
    expect(made.body.url).toMatch(new RegExp(`/shared-board/${ids.b1}:`));
    const path = new URL(made.body.url).pathname;
    const opened = await fetch(`${server.base}${path}`);
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain("Alpha board");
    const listed = await as(tokens.aliceWrite, () => call(`/boards/${ids.b1}/share-links`));
    const mine = listed.body.items.find((l: { id: number }) => l.id === made.body.id);
    expect(mine).toMatchObject({ label: "Client deck", views: 1 });
    expect(JSON.stringify(listed.body)).not.toContain(path.split(":")[1]);
    const revoked = await as(tokens.aliceWrite, () => call(`/boards/${ids.b1}/share-links/${made.body.id}`, { method: "DELETE" }));
    expect(revoked.res.status).toBe(204);
    expect((await fetch(`${server.base}${path}`)).status).not.toBe(200);
    const missing = await as(tokens.aliceWrite, () => send(`/boards/${ids.b1}/share-links`, "POST", { expiry: "7" }));
    expect(missing.res.status).toBe(400);
    expect(missing.body.detail).toMatch(/Required|give the link a name/);
  });

  it("makes a user attribute, assigns a value to images in one request, skips or replaces values held, and filters by it", async () => {
    const made = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/attributes`, "POST", { name: "Shelf type" }));
    expect(made.res.status).toBe(201);
    expect(made.body).toMatchObject({ name: "Shelf_type", kind: "user", active: true });
    const taken = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/attributes`, "POST", { name: "shelf_TYPE" }));
    expect(taken.res.status).toBe(409);
    const reserved = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/attributes`, "POST", { name: "title" }));
    expect(reserved.res.status).toBe(400);
    const [a, b] = (await db().selectFrom("images").select("id").where("project_id", "=", ids.p1).orderBy("id").limit(2).execute()).map(
      (r) => r.id,
    );
    const values = `/projects/${ids.p1}/attributes/${made.body.id}/values`;
    const tagBefore = (await as(tokens.aliceRead, () => call(`/images/${b}`))).res.headers.get("ETag")!;
    expect((await as(tokens.aliceWrite, () => send(values, "POST", { imageIds: [a, b], value: " Gondola " }))).body).toEqual({
      affected: 2,
      skipped: 0,
    });
    expect((await as(tokens.aliceWrite, () => send(values, "POST", { imageIds: [a, b], value: "Chiller" }))).body).toEqual({
      affected: 0,
      skipped: 2,
    });
    expect((await as(tokens.aliceWrite, () => send(values, "POST", { imageIds: [a], value: "Chiller", replace: true }))).body).toEqual({
      affected: 1,
      skipped: 0,
    });
    const bad = await as(tokens.aliceWrite, () => send(values, "POST", { imageIds: [a], value: "a|b" }));
    expect(bad.res.status).toBe(400);
    expect(bad.body.detail).toBe("Value cannot contain special characters");
    const foreign = await as(tokens.aliceWrite, () => send(values, "POST", { imageIds: [a, ids.i3], value: "Chiller" }));
    expect(foreign.res.status).toBe(404);
    // A value is part of the image's answer, so its ETag moves on although the image's version does not.
    const image = await as(tokens.aliceRead, () => call(`/images/${b}`, { headers: { "If-None-Match": tagBefore } }));
    expect(image.res.status).toBe(200);
    expect(image.body.attributes).toEqual([{ attributeId: made.body.id, name: "Shelf_type", value: "Gondola" }]);
    expect(image.res.headers.get("ETag")).not.toBe(tagBefore);
    const filtered = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/images?f=${made.body.id}:Gondola`));
    expect(filtered.body.items.map((i: { id: number }) => i.id)).toEqual([b]);
    const listed = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/attributes`));
    expect(listed.body.items.map((x: { name: string }) => x.name)).toContain("Shelf_type");
  });

  it("uploads by signed URL (sign, send, register) and directly in one multipart request, each file checked on its own", async () => {
    const photo = await jpeg(80, 60, "#aa3311");
    const signed = await as(tokens.aliceWrite, () =>
      send(`/projects/${ids.p1}/uploads`, "POST", { fileName: "Shelf 12.jpg", fileSize: photo.length }),
    );
    expect(signed.res.status).toBe(201);
    // The signed URL is the permission: no token goes with the bytes.
    const put = await fetch(signed.body.uploadUrl, { method: "PUT", body: photo, headers: { "Content-Type": "image/jpeg" } });
    expect(put.status).toBe(200);
    const registered = await as(tokens.aliceWrite, () =>
      send(`/projects/${ids.p1}/images`, "POST", { key: signed.body.key, keywords: ["shelf", "price"], description: "Aisle 12" }),
    );
    expect(registered.res.status).toBe(201);
    expect(registered.body).toMatchObject({ title: "Shelf 12", originalName: "Shelf 12.jpg", keywords: ["shelf", "price"], width: 80 });
    const again = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/images`, "POST", { key: signed.body.key }));
    expect(again.body.id).toBe(registered.body.id);
    const empty = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/uploads`, "POST", { fileName: "x.jpg", fileSize: 0 }));
    expect(empty.res.status).toBe(422);
    const unknownKey = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/images`, "POST", { key: "uploads/never-signed" }));
    expect(unknownKey.res.status).toBe(404);

    const form = new FormData();
    form.append("files", new Blob([await jpeg(30, 20)], { type: "image/jpeg" }), "Direct one.jpg");
    form.append("files", new Blob(["not an image at all, just words"], { type: "image/jpeg" }), "fake.jpg");
    const direct = await as(tokens.aliceWrite, () => call(`/projects/${ids.p1}/files`, { method: "POST", body: form }));
    expect(direct.res.status).toBe(201);
    expect(direct.body.items).toEqual([
      { name: "Direct one.jpg", id: expect.any(Number) },
      { name: "fake.jpg", error: "The file is not a supported image (JPEG, PNG, WebP, GIF, TIFF, AVIF or HEIF)." },
    ]);
    const none = new FormData();
    none.append("files", new Blob(["<html>"], { type: "image/png" }), "page.png");
    const refused = await as(tokens.aliceWrite, () => call(`/projects/${ids.p1}/files`, { method: "POST", body: none }));
    expect(refused.res.status).toBe(422);
    const json = await as(tokens.aliceWrite, () => send(`/projects/${ids.p1}/files`, "POST", { files: [] }));
    expect(json.res.status).toBe(415);
    const made = await as(tokens.aliceRead, () => call(`/images/${direct.body.items[0].id}`));
    expect(made.body).toMatchObject({ title: "Direct one", projectId: ids.p1 });
  });

  it("exports the filtered set, or the images listed, as CSV with their attribute values", async () => {
    const tea = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/export.csv?q=tea`, { method: "POST" }));
    expect(tea.res.status).toBe(200);
    expect(tea.res.headers.get("Content-Type")).toMatch(/^text\/csv/);
    const rows = (tea.body as string).trim().split(/\r?\n/);
    expect(rows).toHaveLength(3); // the header and two images
    expect(rows.slice(1).join("\n")).toMatch(/Tea aisle/);
    expect(rows.slice(1).join("\n")).toMatch(/Tea end cap/);
    const one = await as(tokens.aliceRead, () => send(`/projects/${ids.p1}/export.csv`, "POST", { imageIds: [ids.i1] }));
    expect((one.body as string).trim().split(/\r?\n/)).toHaveLength(2);
    const foreign = await as(tokens.aliceRead, () => send(`/projects/${ids.p1}/export.csv`, "POST", { imageIds: [ids.i1, ids.i3] }));
    expect(foreign.res.status).toBe(404);
  });

  it("refuses what would otherwise be read loosely: malformed filters, unknown export parameters, ids that are not numbers, Remix data URLs", async () => {
    const before = await boardsNow();
    const badFilter = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/images?f=0:x`));
    expect(badFilter.res.status).toBe(400);
    expect(badFilter.body.detail).toBe("An attribute filter is <attributeId>:<value>");
    const badExport = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/export.csv?review=bad`, { method: "POST" }));
    expect(badExport.res.status).toBe(400);
    const longQ = await as(tokens.aliceRead, () => call(`/projects/${ids.p1}/export.csv?q=${"x".repeat(500)}`, { method: "POST" }));
    expect(longQ.res.status).toBe(400);
    const coerced = await as(tokens.aliceWrite, () =>
      send(`/projects/${ids.p1}/boards`, "POST", { title: "Coerced ids", imageIds: [true, String(ids.i1)] }),
    );
    expect(coerced.res.status).toBe(400);
    expect(await boardsNow()).toEqual(before);
    const data = await fetch(`${server.base}/api/v1/projects.data`, { headers: { Authorization: `Bearer ${tokens.aliceRead}` } });
    expect(data.status).toBe(404);
    expect(data.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
    // No cookie is read here, so a cross-site request with a token is a script's like any other.
    const crossSite = await as(tokens.aliceWrite, () =>
      call(`/projects/${ids.p1}/boards`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "cross-site", Origin: "https://elsewhere.example" },
        body: JSON.stringify({ title: "From a notebook" }),
      }),
    );
    expect(crossSite.res.status).toBe(201);
  });

  it("revokes a person's tokens when an admin disables them, for good, and no longer names a project they left", async () => {
    const person = await makeUser();
    const project = await makeProject([{ actor: person.actor, role: "editor" }]);
    const { secret } = await createToken(person.actor, { name: "Soon gone", write: false, projects: [project.id], days: 7 });
    expect((await as(secret, () => call("/projects"))).res.status).toBe(200);
    const admin = await makeUser("admin");
    await setUserStatus(admin.actor, person.user.id, "disabled");
    expect((await as(secret, () => call("/projects"))).res.status).toBe(401);
    await setUserStatus(admin.actor, person.user.id, "active");
    expect((await as(secret, () => call("/projects"))).res.status).toBe(401);
    await db().deleteFrom("project_members").where("user_id", "=", person.user.id).execute();
    const [row] = await myTokens(person.actor);
    expect(row!.projects).toEqual([{ id: project.id, name: "a project you are no longer in" }]);
  });

  it("counts each token's requests per minute in RateLimit fields and answers 429 with Retry-After past them", async () => {
    const { secret } = await createToken(alice.actor, { name: "busy", write: false, projects: null, days: 7 });
    const first = await as(secret, () => call("/projects"));
    expect(first.res.headers.get("RateLimit-Limit")).toBe(String(RATE));
    expect(first.res.headers.get("RateLimit-Remaining")).toBe(String(RATE - 1));
    for (let i = 1; i < RATE; i++) await fetch(`${server.base}/api/v1/projects`, { headers: { Authorization: `Bearer ${secret}` } });
    const over = await as(secret, () => call("/projects"));
    expect(over.res.status).toBe(429);
    // Writes refused over the limit never reach a handler: the audit log does not grow with a flood.
    const audited = () => db().selectFrom("audit_log").select("id").where("action", "=", "api.write").execute();
    const logged = (await audited()).length;
    for (let i = 0; i < 5; i++) await as(secret, () => send(`/projects/${ids.p1}/boards`, "POST", { title: "Flood" }));
    expect((await audited()).length).toBe(logged);
    expect(Number(over.res.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(over.res.headers.get("RateLimit-Remaining")).toBe("0");
    // Another token's budget is its own.
    expect((await as(tokens.aliceRead, () => call("/projects"))).res.status).toBe(200);
  });

  it("lets an admin list everyone's tokens and revoke one in the console, and no one else", async () => {
    const admin = await makeUser("admin");
    const adminCookie = await sessionCookie(admin.user.id);
    const { id, secret } = await createToken(alice.actor, { name: "Leaver's script", write: true, projects: null, days: 30 });
    const page = await pageText(await fetch(`${server.base}/admin/tokens`, { headers: { Cookie: adminCookie } }));
    expect(page).toContain("Leaver's script");
    expect(page).toContain(alice.user.email);
    const post = (cookie: string) =>
      fetch(`${server.base}/admin/tokens`, {
        method: "POST",
        redirect: "manual",
        headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded", Origin: server.base },
        body: new URLSearchParams({ intent: "revoke", token: String(id) }),
      });
    expect((await fetch(`${server.base}/admin/tokens`, { redirect: "manual", headers: { Cookie: aliceCookie } })).status).toBe(404);
    expect((await post(aliceCookie)).status).toBe(404);
    expect((await as(secret, () => call("/projects"))).res.status).toBe(200);
    expect((await post(adminCookie)).status).toBe(302);
    expect((await as(secret, () => call("/projects"))).res.status).toBe(401);
    const entry = await db()
      .selectFrom("audit_log")
      .select("actor_user_id")
      .where("action", "=", "api_token.revoked")
      .where("subject", "=", `api_token:${id}`)
      .executeTakeFirst();
    expect(entry?.actor_user_id).toBe(admin.user.id);
  });

  it("makes a token on the profile page, shows it once, keeps only its hash, records its use, and revokes it", async () => {
    const form = (fields: [string, string][]) =>
      fetch(`${server.base}/profile/tokens`, {
        method: "POST",
        redirect: "manual",
        headers: { Cookie: aliceCookie, "Content-Type": "application/x-www-form-urlencoded", Origin: server.base },
        body: new URLSearchParams(fields),
      });
    const refused = await form([
      ["intent", "create"],
      ["name", "Notebook"],
      ["reach", "some"],
    ]);
    expect(refused.status).toBe(400);
    expect(await pageText(refused)).toContain("Choose at least one project");
    const foreign = await form([
      ["intent", "create"],
      ["name", "Notebook"],
      ["reach", "some"],
      ["projects", String(ids.p3)],
    ]);
    expect(await pageText(foreign)).toContain("Choose projects you are a member of.");

    const made = await form([
      ["intent", "create"],
      ["name", "Notebook"],
      ["access", "read"],
      ["reach", "some"],
      ["projects", String(ids.p1)],
      ["days", "7"],
    ]);
    expect(made.status).toBe(200);
    const html = await made.text();
    const secret = /koala_pat_[A-Za-z0-9_-]{43}/.exec(html)?.[0];
    expect(secret).toBeDefined();
    const row = await db().selectFrom("api_tokens").selectAll().where("name", "=", "Notebook").executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256(secret!));
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(row).toMatchObject({ can_write: 0, projects: JSON.stringify([ids.p1]) });

    expect((await as(secret!, () => call(`/projects/${ids.p1}`))).res.status).toBe(200);
    const listed = await pageText(await fetch(`${server.base}/profile/tokens`, { headers: { Cookie: aliceCookie } }));
    expect(listed).toContain("Notebook");
    expect(listed).toMatch(/from 127\.0\.0\.1/);
    expect(listed).not.toContain(secret);

    // Another person cannot revoke it; its owner can, and it stops at once.
    const bobCookie = await sessionCookie((await makeUser()).user.id);
    const theirs = await fetch(`${server.base}/profile/tokens`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: bobCookie, "Content-Type": "application/x-www-form-urlencoded", Origin: server.base },
      body: new URLSearchParams({ intent: "revoke", token: String(row.id) }),
    });
    expect(theirs.status).toBe(404);
    expect((await as(secret!, () => call("/projects"))).res.status).toBe(200);
    const revoked = await form([
      ["intent", "revoke"],
      ["token", String(row.id)],
    ]);
    expect(revoked.status).toBe(302);
    expect((await as(secret!, () => call("/projects"))).res.status).toBe(401);
  });

  it("refuses a person's token past the 50 working ones, on the page too, until one is revoked", async () => {
    const person = await makeUser();
    const made = [];
    for (let i = 0; i < MAX_WORKING_TOKENS; i++)
      made.push(await createToken(person.actor, { name: `t${i}`, write: false, projects: null, days: 7 }));
    await expect(createToken(person.actor, { name: "one more", write: false, projects: null, days: 7 })).rejects.toThrow(TOO_MANY_TOKENS);
    // Made at once, one token is the cap's last place: the other is refused.
    await revokeToken(person.actor, made.pop()!.id);
    const both = await Promise.allSettled(
      ["a", "b"].map((name) => createToken(person.actor, { name, write: false, projects: null, days: 7 })),
    );
    expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    made.push(...both.flatMap((r) => (r.status === "fulfilled" ? [r.value] : [])));
    const page = await fetch(`${server.base}/profile/tokens`, {
      method: "POST",
      headers: { Cookie: await sessionCookie(person.user.id), "Content-Type": "application/x-www-form-urlencoded", Origin: server.base },
      body: new URLSearchParams([
        ["intent", "create"],
        ["name", "From the page"],
        ["access", "read"],
        ["reach", "all"],
        ["days", "30"],
      ]),
    });
    expect(page.status).toBe(400);
    expect(await pageText(page)).toContain(TOO_MANY_TOKENS);
    expect((await myTokens(person.actor)).filter((t) => t.revokedAt === null)).toHaveLength(MAX_WORKING_TOKENS);
    await revokeToken(person.actor, made[0]!.id);
    await expect(createToken(person.actor, { name: "one more", write: false, projects: null, days: 7 })).resolves.toHaveProperty("secret");
  });

  it("sends an image's original as a named download and its WebP preview and thumbnail, 304 on its ETag, to tokens in reach only", async () => {
    const bytes = await jpeg(80, 60);
    const file = await storeImageFile(bytes);
    await insertImageRows(await projectScope(alice.actor, ids.p1), [
      { file, meta: { ...meta("Café shelf", ["file"]), originalName: "café shelf.jpg" }, at: 1_500_000_000_000 },
    ]);
    const reader = (await createToken(alice.actor, { name: "files", write: false, projects: null, days: 7 })).secret;
    const id = (await db().selectFrom("images").select("id").where("checksum", "=", file.checksum).executeTakeFirstOrThrow()).id;

    const original = await as(reader, () =>
      fetch(`${server.base}/api/v1/images/${id}/file`, { headers: { Authorization: `Bearer ${reader}` } }),
    );
    expect(original.status).toBe(200);
    expect(original.headers.get("Content-Type")).toBe("image/jpeg");
    expect(original.headers.get("Content-Disposition")).toBe(
      `attachment; filename="caf_ shelf.jpg"; filename*=UTF-8''caf%C3%A9%20shelf.jpg`,
    );
    expect(original.headers.get("Content-Security-Policy")).toMatch(/sandbox/);
    expect(Buffer.from(await original.arrayBuffer()).equals(bytes)).toBe(true);
    // Checked against the document too (its image/* answer and headers).
    const checked = await as(reader, () => call(`/images/${id}/file`));
    expect(checked.res.status).toBe(200);

    for (const [variant, key] of [
      ["preview", file.previewKey],
      ["thumbnail", file.thumbKey],
    ] as const) {
      const res = await as(reader, () => call(`/images/${id}/file?variant=${variant}`));
      expect(res.res.status, variant).toBe(200);
      expect(res.res.headers.get("Content-Type")).toBe("image/webp");
      expect(res.res.headers.get("Content-Disposition")).toBeNull();
      const etag = res.res.headers.get("ETag")!;
      expect(etag).toBe(`"${key.split("/").pop()}"`);
      const again = await as(reader, () => call(`/images/${id}/file?variant=${variant}`, { headers: { "If-None-Match": etag } }));
      expect(again.res.status).toBe(304);
    }

    const unknown = await as(reader, () => call(`/images/${id}/file?variant=raw`));
    expect(unknown.res.status).toBe(400);
    const extra = await as(reader, () => call(`/images/${id}/file?size=big`));
    expect(extra.res.status).toBe(400);
    // Out of reach: another person's token, and a token narrowed to another project, get 404 and no bytes.
    for (const [secret, image] of [
      [tokens.bobWrite, id],
      [tokens.aliceP1, ids.i2],
      [tokens.aliceWrite, ids.i3],
    ] as const) {
      const res = await as(secret, () => call(`/images/${image}/file`));
      expect(res.res.status).toBe(404);
      expect(res.res.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
    }
    expect((await as(null, () => call(`/images/${id}/file`))).res.status).toBe(401);
  });

  it("answers HEAD on a file without opening it, and gives back the download places of requests abandoned at once", async () => {
    // Noise does not compress: an original of about 3.6 MB, larger than the chunk a stream reads ahead, so a body
    // left unread keeps its file open.
    const noise = randomBytes(1100 * 1100 * 3);
    const file = await storeImageFile(
      await sharp(noise, { raw: { width: 1100, height: 1100, channels: 3 } })
        .png({ compressionLevel: 0 })
        .toBuffer(),
    );
    await insertImageRows(await projectScope(alice.actor, ids.p1), [{ file, meta: meta("Held shelf", ["held"]), at: 1_500_000_000_001 }]);
    const id = (await db().selectFrom("images").select("id").where("checksum", "=", file.checksum).executeTakeFirstOrThrow()).id;
    const { secret } = await createToken(alice.actor, { name: "held", write: false, projects: null, days: 7 });
    const auth = { Authorization: `Bearer ${secret}` };
    const openObjects = () => {
      const dir = `/proc/${server.child.pid}/fd`;
      return readdirSync(dir).filter((fd) => {
        try {
          return readlinkSync(`${dir}/${fd}`).includes("/objects/");
        } catch {
          return false;
        }
      }).length;
    };
    const before = openObjects();
    for (let i = 0; i < 12; i++) {
      const head = await fetch(`${server.base}/api/v1/images/${id}/file${i % 2 ? "?variant=preview" : ""}`, {
        method: "HEAD",
        headers: auth,
      });
      expect(head.status).toBe(200);
      expect(Number(head.headers.get("Content-Length"))).toBeGreaterThan(0);
    }
    // Abandoned as soon as sent, more times than one person's download places (4).
    for (let i = 0; i < 12; i++) {
      const abort = new AbortController();
      const pending = fetch(`${server.base}/api/v1/images/${id}/file`, { headers: auth, signal: abort.signal }).catch(() => null);
      setTimeout(() => abort.abort(), i % 4);
      await pending;
    }
    await expect.poll(openObjects, { timeout: 5_000 }).toBe(before);
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${server.base}/api/v1/images/${id}/file`, { headers: auth });
      expect(res.status, `download ${i + 1}`).toBe(200);
      await res.arrayBuffer();
    }
  });

  it("changes a filtered set in bulk at once, checks every listed id, and refuses what the grid's bulk bar refuses", async () => {
    const project = await makeProject([{ actor: alice.actor, role: "manager" }]);
    const scope = await projectScope(alice.actor, project.id);
    // Tokens of their own: the file's earlier tests spent much of the shared ones' budget for this minute.
    const mine = await createToken(alice.actor, { name: "bulk", write: true, projects: null, days: 7 });
    const mineRead = await createToken(alice.actor, { name: "bulk read", write: false, projects: null, days: 7 });
    await insertImageRows(
      scope,
      ["Juice aisle", "Juice end", "Soap aisle"].map((title, k) => ({
        file: fakeFile(700 + k),
        meta: meta(title, ["store"]),
        at: 1_650_000_000_000 + k,
      })),
    );
    const images = await db().selectFrom("images").select(["id", "title"]).where("project_id", "=", project.id).orderBy("id").execute();
    const keywordsOf = async () =>
      Object.fromEntries(
        (await db().selectFrom("images").select(["title", "keywords"]).where("project_id", "=", project.id).execute()).map((r) => [
          r.title,
          JSON.parse(r.keywords),
        ]),
      );
    const bulk = (query: string, body: unknown) => as(mine.secret, () => send(`/projects/${project.id}/images/bulk${query}`, "POST", body));

    const juice = await bulk("?q=juice", { all: true, action: { op: "keywords", keywords: ["Chilled", "store"] } });
    expect(juice.res.status).toBe(200);
    expect(juice.body).toEqual({ affected: 2, skipped: 0 });
    expect(await keywordsOf()).toEqual({
      "Juice aisle": ["store", "Chilled"],
      "Juice end": ["store", "Chilled"],
      "Soap aisle": ["store"],
    });

    const board = await createBoard(scope, { title: "Bulk board" });
    const pinned = await bulk("", { all: true, exceptIds: [images[2]!.id], action: { op: "board", boardId: board.id } });
    expect(pinned.body).toEqual({ affected: 2, skipped: 0 });
    const onBoard = await db().selectFrom("board_images").select("image_id").where("board_id", "=", board.id).orderBy("image_id").execute();
    expect(onBoard.map((r) => r.image_id)).toEqual([images[0]!.id, images[1]!.id]);

    const before = await keywordsOf();
    // One id outside the project: 404 naming it, nothing changed.
    const foreign = await bulk("", { imageIds: [images[0]!.id, ids.i3], action: { op: "keywords", keywords: ["nope"] } });
    expect(foreign.res.status).toBe(404);
    expect(foreign.body.errors).toEqual([{ pointer: "/imageIds/1", detail: `No image ${ids.i3} here` }]);
    for (const body of [
      { action: { op: "delete" } }, // neither imageIds nor all
      { imageIds: [images[0]!.id], all: true, action: { op: "delete" } }, // both
      { imageIds: [images[0]!.id], exceptIds: [1], action: { op: "delete" } },
      { all: true, action: { op: "explode" } },
      { all: true, action: { op: "keywords", keywords: ["a"] } },
      { all: true, action: { op: "delete", extra: 1 } },
    ]) {
      const refused = await bulk("", body);
      expect(refused.res.status, JSON.stringify(body)).toBe(400);
    }
    // What a background job would only find later is refused at once: another project's board, an unknown attribute.
    const otherBoard = await bulk("", { all: true, action: { op: "board", boardId: ids.b2 } });
    expect(otherBoard.res.status).toBe(404);
    const noAttribute = await bulk("", { all: true, action: { op: "attribute", attributeId: 999_999, value: "x" } });
    expect(noAttribute.res.status).toBe(400);
    const nothing = await bulk("?q=zzzz", { all: true, action: { op: "delete" } });
    expect(nothing.res.status).toBe(400);
    expect(nothing.body.detail).toBe("No images are selected.");
    const readOnly = await as(mineRead.secret, () =>
      send(`/projects/${project.id}/images/bulk`, "POST", { all: true, action: { op: "delete" } }),
    );
    expect(readOnly.res.status).toBe(403);
    expect(await keywordsOf()).toEqual(before);

    const deleted = await bulk("?q=soap", { all: true, action: { op: "delete" } });
    expect(deleted.body).toEqual({ affected: 1, skipped: 0 });
    expect(Object.keys(await keywordsOf()).sort()).toEqual(["Juice aisle", "Juice end"]);
  });

  it(
    "runs a bulk change of more than 5,000 images as a job that only its own token can follow, narrowed by that token when it runs",
    { timeout: 120_000 },
    async () => {
      const project = await makeProject([{ actor: alice.actor, role: "manager" }]);
      const scope = await projectScope(alice.actor, project.id);
      const count = BULK_INLINE_MAX + 20;
      await insertManyImages(scope, count, { first: 50_000, title: (i) => `many ${i}`, at: 1_600_000_000_000 });
      const attribute = await as((await createToken(alice.actor, { name: "attr", write: true, projects: null, days: 7 })).secret, () =>
        send(`/projects/${project.id}/attributes`, "POST", { name: "Wave" }),
      );
      expect(attribute.res.status).toBe(201);
      const { secret, id: tokenId } = await createToken(alice.actor, { name: "job", write: true, projects: [project.id], days: 7 });
      const started = await as(secret, () =>
        send(`/projects/${project.id}/images/bulk`, "POST", {
          all: true,
          action: { op: "attribute", attributeId: attribute.body.id, value: "W1" },
        }),
      );
      expect(started.res.status).toBe(202);
      expect(started.body).toMatchObject({ status: "queued", total: count, result: null });
      const location = started.res.headers.get("Location")!;
      expect(location).toBe(`/api/v1/jobs/${started.body.id}`);
      const follow = (who: string | null) => as(who, () => call(location.replace("/api/v1", "")));
      // Only the token that started it sees it: not its owner's other tokens, not another person's.
      for (const other of [tokens.aliceWrite, tokens.bobWrite]) expect((await follow(other)).res.status).toBe(404);
      expect((await as(secret, () => call("/jobs/99999999"))).res.status).toBe(404);

      while (await runOnce(jobRegistry, "api-test"));
      const done = await follow(secret);
      expect(done.body).toEqual({
        id: started.body.id,
        status: "done",
        progress: count,
        total: count,
        result: { affected: count, skipped: 0 },
      });
      const valued = await db()
        .selectFrom("image_attribute_values")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("attribute_id", "=", attribute.body.id)
        .executeTakeFirstOrThrow();
      expect(Number(valued.n)).toBe(count);

      // A job whose token is revoked before it runs does nothing.
      const second = await as(secret, () =>
        send(`/projects/${project.id}/images/bulk`, "POST", { all: true, action: { op: "keywords", keywords: ["late"] } }),
      );
      expect(second.res.status).toBe(202);
      await revokeToken(alice.actor, tokenId);
      // Its first attempt stops before changing anything and fails the job for good: a revoked token never heals.
      await runOnce(jobRegistry, "api-test");
      const job = await db()
        .selectFrom("jobs")
        .select(["status", "attempts", "last_error"])
        .where("id", "=", second.body.id)
        .executeTakeFirstOrThrow();
      expect(job).toMatchObject({ status: "failed", attempts: 1 });
      expect(job.last_error).toMatch(/revoked or has expired/);
      const late = await db()
        .selectFrom("images")
        .select("id")
        .where("project_id", "=", project.id)
        .where("keywords", "like", "%late%")
        .execute();
      expect(late).toEqual([]);
    },
  );
});
