import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoard } from "~/models/boards.server";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { insertImage, insertImageRows } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { signIn } from "~/sessions.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { fakeFile, makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { startServer, type RunningServer } from "../helpers/server";

/**
 * GET /api/grid over real HTTP against the built server: the virtual grid's pages (ETag / 304), its jumps
 * (`at=`), its freshness check (`check=version`), and ids outside the user's projects.
 */
const SESSION_SECRET = "api-grid-test-secret-0123456789abcdef01234";

interface GridAnswer {
  cards: { id: number; title: string }[];
  next: string | null;
  total: number;
  version: string;
}

describe.each(dialects)("GET /api/grid (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let cookie: string;
  let projectId: number;
  let foreignProjectId: number;
  let boardId: string;
  let foreignBoardId: string;
  let owner: Awaited<ReturnType<typeof makeUser>>;
  const get = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${server.base}/api/grid?${query}`, { headers: { Cookie: cookie, ...headers } });

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    owner = await makeUser();
    const stranger = await makeUser();
    const project = await makeProject([{ actor: owner.actor, role: "manager" }]);
    const foreign = await makeProject([{ actor: stranger.actor }]);
    projectId = project.id;
    foreignProjectId = foreign.id;
    const mine = await projectScope(owner.actor, project.id);
    await insertImageRows(
      mine,
      Array.from({ length: 150 }, (_, i) => ({ file: fakeFile(i), meta: meta(`img ${i}`), at: 1_700_000_000_000 + i * 1000 })),
    );
    const theirs = await projectScope(stranger.actor, foreign.id);
    const foreignImage = await insertImage(theirs, await storedFakeFile(999), meta("theirs"));
    boardId = (await createBoard(await projectScope(owner.actor, projectId), { title: "Mine" })).id;
    foreignBoardId = (await createBoard(await projectScope(stranger.actor, foreign.id), { title: "Theirs", imageIds: [foreignImage] })).id;
    const signedIn = await signIn(
      new Request("http://127.0.0.1/login"),
      { ip: "127.0.0.1", userAgent: "api test" },
      owner.user.id,
      "/",
      "test",
    );
    cookie = signedIn.headers.get("Set-Cookie")!.split(";")[0]!;
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  it("answers a page with an ETag, 304 to If-None-Match while nothing changed, and a new page after a change", async () => {
    const first = await get(`project=${projectId}`);
    expect(first.status).toBe(200);
    const etag = first.headers.get("ETag")!;
    expect(etag).toMatch(/^W\/".+"$/);
    const body = (await first.json()) as GridAnswer;
    expect(body.cards).toHaveLength(100);
    expect(body.total).toBe(150);
    expect(body.cards[0]!.title).toBe("img 149");

    const again = await get(`project=${projectId}`, { "If-None-Match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    // Another query is another representation.
    expect((await get(`project=${projectId}&limit=10`, { "If-None-Match": etag })).status).toBe(200);

    await insertImage(await projectScope(owner.actor, projectId), await storedFakeFile(500), meta("newest"));
    const changed = await get(`project=${projectId}`, { "If-None-Match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("ETag")).not.toBe(etag);
    expect(((await changed.json()) as GridAnswer).cards[0]!.title).toBe("newest");
  });

  it("jumps: at=N starts at the Nth card of the whole set, down to the last", async () => {
    const all = ((await (await get(`project=${projectId}&limit=300`)).json()) as GridAnswer).cards.map((c) => c.id);
    for (const at of [1, 57, 99, 100, all.length - 1]) {
      const page = (await (await get(`project=${projectId}&at=${at}&limit=3`)).json()) as GridAnswer;
      expect(page.cards.map((c) => c.id)).toEqual(all.slice(at, at + 3));
    }
  });

  it("follows a search's cursors page after page; a malformed cursor gets the first page, an overlong one a 400", async () => {
    const all = ((await (await get(`project=${projectId}&q=img&limit=300`)).json()) as GridAnswer).cards.map((c) => c.id);
    expect(all).toHaveLength(150);
    const seen: number[] = [];
    let next: string | null = null;
    do {
      const res = await get(`project=${projectId}&q=img&limit=40${next ? `&after=${next}` : ""}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as GridAnswer;
      seen.push(...page.cards.map((c) => c.id));
      next = page.next;
    } while (next);
    expect(seen).toEqual(all);
    const first = (await (await get(`project=${projectId}&q=img&limit=5`)).json()) as GridAnswer;
    for (const bad of ["x", "!!!", Buffer.from("1.2.3").toString("base64url"), Buffer.from("1:2:3.4").toString("base64url")]) {
      const res = await get(`project=${projectId}&q=img&limit=5&after=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(200);
      expect(((await res.json()) as GridAnswer).cards, bad).toEqual(first.cards);
    }
    const overlong = await get(`project=${projectId}&q=img&after=${"A".repeat(65)}`);
    expect(overlong.status).toBe(400);
    expect(await overlong.json()).toEqual({ error: "Data format error" });
  });

  it("check=version answers only the scope's version and its filters' fingerprint, never cached, and it moves on with a write", async () => {
    const before = await get(`project=${projectId}&check=version`);
    expect(before.status).toBe(200);
    expect(before.headers.get("Cache-Control")).toBe("no-store");
    const { version, ...rest } = (await before.json()) as { version: string };
    expect(rest).toEqual({ filters: null }); // this project has no attribute values to filter by
    expect(((await (await get(`project=${projectId}&check=version`)).json()) as { version: string }).version).toBe(version);
    await insertImage(await projectScope(owner.actor, projectId), await storedFakeFile(501), meta("newer still"));
    expect(((await (await get(`project=${projectId}&check=version`)).json()) as { version: string }).version).not.toBe(version);
    // A board has a version of its own.
    expect((await get(`board=${boardId}&check=version`)).status).toBe(200);
  });

  it("check=version counts no facets while the tab's version is current; a stale tab gets the filters' fingerprint", async () => {
    const scope = await projectScope(owner.actor, projectId);
    const attributeId = await createAttribute(scope, { name: "Region", type: 3 });
    const image = await insertImage(scope, await storedFakeFile(502), meta("with a region"));
    await setAttributeValues(scope, [{ imageId: image, attributeId, value: "North" }]);
    const { version } = (await (await get(`project=${projectId}&check=version`)).json()) as { version: string };
    const current = (await (await get(`project=${projectId}&check=version&v=${version}`)).json()) as { filters: string | null };
    expect(current.filters).toBeNull();
    const stale = (await (await get(`project=${projectId}&check=version&v=1`)).json()) as { filters: string | null };
    expect(typeof stale.filters).toBe("string");
  });

  // Written to the intended behaviour (issue 9, item 9): a JSON 404 with the spec's message, no stack in the log.
  it("answers a foreign or unknown project or board id with a JSON 404 carrying the spec's message, and logs no stack", async () => {
    const cases: [string, string][] = [
      [`project=${foreignProjectId}`, `No Projects Found with ID: ${foreignProjectId}`],
      ["project=999999", "No Projects Found with ID: 999999"],
      [`board=${foreignBoardId}`, `No Board Found with ID: ${foreignBoardId}`],
      ["board=nope", "No Board Found with ID: nope"],
      [`project=${foreignProjectId}&check=version`, `No Projects Found with ID: ${foreignProjectId}`],
    ];
    const logBefore = server.output().length;
    for (const [query, error] of cases) {
      const res = await get(query);
      expect(res.status, query).toBe(404);
      expect(res.headers.get("Content-Type"), query).toMatch(/^application\/json/);
      expect(await res.json(), query).toEqual({ error });
    }
    await fetch(`${server.base}/healthz`); // the log lines of the requests above are written by now
    await new Promise((r) => setTimeout(r, 200));
    const log = server.output().slice(logBefore);
    // No dump: no stack frames, no error objects printed, at most one line per request.
    expect(log).not.toMatch(/^\s+at /m);
    expect(log).not.toMatch(/ErrorResponse|Unexpected Server Error|\{\s*$/m);
    expect(log.split("\n").filter(Boolean).length).toBeLessThanOrEqual(cases.length);
  });
});
