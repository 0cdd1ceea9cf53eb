import { readdirSync, readFileSync } from "node:fs";
import { connect as tcp } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { createBoard } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { sessionCookie, startAppServer, type AppServer } from "../helpers/server";

/**
 * The running product, attacked the way issue 9 found it broken: malformed bodies on every action and API route,
 * open redirects, leaking and hanging no-JS uploads, a forged X-Forwarded-For, address lists in the magic-link
 * form, a stranger's selection, cached signed-in pages, error dumps and NaN ids. Real server, real HTTP.
 */
interface BuiltRoute {
  id: string;
  parentId?: string;
  path?: string;
  module: { action?: unknown; loader?: unknown };
}

/** Every route of the production build that has an action, with its URL pattern. */
async function actionRoutes(): Promise<string[]> {
  const build = (await import(path.resolve("build/server/index.js"))) as { routes: Record<string, BuiltRoute> };
  const fullPath = (r: BuiltRoute): string => {
    const parent = r.parentId ? build.routes[r.parentId] : undefined;
    const own = r.path ?? "";
    return parent ? [fullPath(parent), own].filter(Boolean).join("/") : own;
  };
  return Object.values(build.routes)
    .filter((r) => r.module.action)
    .map((r) => `/${fullPath(r)}`);
}

/** The status line of a request written byte for byte over TCP. */
function rawStatus(app: AppServer, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const socket = tcp(Number(new URL(app.base).port), "127.0.0.1", () => socket.write(text));
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (m) {
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on("error", reject);
  });
}

describe.each(dialects)("hardening: the running server under hostile requests (%s)", (dialect) => {
  let t: TestDatabase;
  let app: AppServer;
  let editor: string;
  let stranger: string;
  let pendingTerms: string;
  let projectId: number;
  let boardId: string;
  let imageId: number;

  beforeAll(async () => {
    t = await freshDatabase(dialect, { LOG_LEVEL: "warn" });
    const e = await makeUser();
    const s = await makeUser();
    const p = await makeUser("user", { terms_acknowledged_at: null });
    const project = await makeProject([{ actor: e.actor }, { actor: p.actor }]);
    projectId = project.id;
    await makeProject([{ actor: s.actor }]);
    const scope = await projectScope(e.actor, projectId);
    imageId = await insertImage(scope, await storedFakeFile(7), meta("Shelf"));
    boardId = (await createBoard(scope, { title: "Board", imageIds: [imageId] })).id;
    editor = await sessionCookie(e.user.id);
    stranger = await sessionCookie(s.user.id);
    pendingTerms = await sessionCookie(p.user.id);
    app = await startAppServer(t, {
      TRUST_PROXY: "1",
      RATE_LIMIT_PER_IP: "3",
      RATE_LIMIT_PER_ADDRESS: "2",
      MAX_IMAGE_BYTES: String(1024 * 1024),
    });
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    await t?.drop();
  });

  const request = (url: string, init: RequestInit & { cookie?: string } = {}) =>
    fetch(`${app.base}${url}`, {
      redirect: "manual",
      ...init,
      headers: { ...(init.cookie ? { Cookie: init.cookie } : {}), ...(init.headers as Record<string, string>) },
    });
  const concrete = (pattern: string) =>
    pattern
      .replace(":clientID", String(projectId))
      .replace(":boardID", boardId)
      .replace(":id", pattern.includes("image") ? String(imageId) : String(projectId))
      .replace(":token", "x".repeat(43))
      .replace("*", "no-such-page");

  const truncated = `--zz\r\nContent-Disposition: form-data; name="files"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\nabc`;
  const shapes: { name: string; headers: Record<string, string>; body: string; expect: number[] }[] = [
    {
      name: "a multipart body without its closing boundary",
      headers: { "Content-Type": "multipart/form-data; boundary=zz" },
      body: truncated,
      expect: [400],
    },
    { name: "multipart without a boundary", headers: { "Content-Type": "multipart/form-data" }, body: "intent=x", expect: [400, 415] },
    { name: "a content type nobody reads", headers: { "Content-Type": "text/xml" }, body: "<x/>", expect: [415] },
    { name: "no content type at all", headers: {}, body: "intent=x", expect: [415] },
    { name: "broken JSON", headers: { "Content-Type": "application/json" }, body: '{"clientID": 1,', expect: [400, 415] },
  ];

  it("answers every malformed body on every action and API route with a clear 4xx, logs one line without a stack, and stays up", async () => {
    const routes = await actionRoutes();
    expect(routes).toEqual(
      expect.arrayContaining(["/upload/:clientID/files", "/upload/:clientID", "/api/images", "/api/uploads", "/login"]),
    );
    const before = app.stderr().length;
    for (const route of routes) {
      const url = concrete(route);
      const method = route === "/storage/upload" ? "PUT" : "POST";
      for (const shape of shapes) {
        if (method === "PUT") continue; // the PUT target takes raw bytes; its refusals are covered in uploads.test.ts
        const res = await request(url, { method, cookie: editor, headers: shape.headers, body: shape.body });
        const text = await res.text();
        expect.soft(shape.expect, `${shape.name} → ${url} answered ${res.status}: ${text.slice(0, 120)}`).toContain(res.status);
        expect.soft(text.length, `${shape.name} → ${url} says why`).toBeGreaterThan(0);
      }
    }
    // fetch refuses to send TRACE: write it by hand.
    expect(await rawStatus(app, "TRACE / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")).toBe(405);
    expect((await request("/healthz")).status).toBe(200);
    const logged = app.stderr().slice(before);
    expect(logged).not.toMatch(/\n\s+at /); // no stack trace
    for (const line of logged.split("\n").filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  }, 120_000);

  it("never redirects to another site, whatever dot segments or encodings the target hides behind", async () => {
    for (const target of [
      "/.//evil.example",
      "/..//evil.example",
      "/%2e//evil.example",
      "/x/..//evil.example",
      "//evil.example",
      "/\\evil.example",
    ]) {
      const login = await request(`/login?redirectTo=${encodeURIComponent(target)}`, { cookie: editor });
      expect(login.status).toBe(302);
      const location = login.headers.get("Location")!;
      expect(new URL(location, app.base).origin, `login → ${location}`).toBe(app.base);
      const theme = await request("/theme", {
        method: "POST",
        cookie: editor,
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ theme: "darkmode", redirectTo: target }).toString(),
      });
      expect(new URL(theme.headers.get("Location")!, app.base).origin, `theme → ${theme.headers.get("Location")}`).toBe(app.base);
      const page = await (await request(`/image/${imageId}?from=${encodeURIComponent(target)}`, { cookie: editor })).text();
      const back = /<a href="([^"]*)"[^>]*>← Back/.exec(page)?.[1] ?? "";
      expect(new URL(back.replaceAll("&amp;", "&"), app.base).origin, `Back → ${back}`).toBe(app.base);
    }
  });

  it("cleans up aborted no-JS uploads: no open file and no temporary file left behind", async () => {
    const fds = () => readdirSync(`/proc/${app.child.pid}/fd`).length;
    const tmpFiles = () => {
      try {
        return readdirSync(path.join(t.dataDir, "objects", ".tmp")).length;
      } catch {
        return 0;
      }
    };
    const before = fds();
    const body = await jpeg(64, 48);
    for (let i = 0; i < 10; i++) {
      await new Promise<void>((resolve) => {
        const socket = tcp(Number(new URL(app.base).port), "127.0.0.1", () => {
          const head = `--zz\r\nContent-Disposition: form-data; name="files"; filename="a${i}.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;
          socket.write(
            `POST /upload/${projectId}/files HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${editor}\r\n` +
              `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: 500000\r\n\r\n${head}`,
          );
          socket.write(body);
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 200);
        });
      });
    }
    await expect.poll(tmpFiles, { timeout: 10_000 }).toBe(0);
    await expect.poll(fds, { timeout: 10_000 }).toBeLessThanOrEqual(before + 2);
    expect((await request("/healthz")).status).toBe(200);
  });

  it("answers a no-JS upload over the size limit with 413 and the reason, and stays up", async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    const form = new FormData();
    form.append("files", new Blob([new Uint8Array(big)], { type: "image/jpeg" }), "huge.jpg");
    const res = await request(`/upload/${projectId}/files`, {
      method: "POST",
      cookie: editor,
      body: form,
      signal: AbortSignal.timeout(60_000),
    });
    expect(res.status).toBe(413);
    expect(await res.text()).toContain("huge.jpg: The file is larger than 1 MB.");
    expect((await request("/healthz")).status).toBe(200);
  }, 90_000);

  it("takes the client address from the trusted proxy's hop, not from a forged first X-Forwarded-For entry", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await request("/login", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": `198.51.100.${i}, 203.0.113.9` },
        body: new URLSearchParams({ intent: "magic-link", email: `someone${i}@example.com` }).toString(),
      });
      statuses.push(res.status);
    }
    // RATE_LIMIT_PER_IP=3: the fourth attempt from 203.0.113.9 is refused, however the first hop is forged.
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  it("accepts exactly one address in the magic-link form and limits by the normalised recipient", async () => {
    const post = (email: string, ip: string) =>
      request("/login", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": ip },
        body: new URLSearchParams({ intent: "magic-link", email }).toString(),
      });
    for (const [i, list] of [
      "x0,victim@b.test",
      "x1;victim@b.test",
      "a@b.test victim@b.test",
      "<victim@b.test>",
      '"x" victim@b.test',
    ].entries()) {
      const res = await post(list, `192.0.2.${i}`);
      expect(res.status, list).toBe(400);
      expect(await res.text()).toContain("Please enter a valid email address.");
    }
    const queued = async () =>
      (await db().selectFrom("jobs").select("payload").where("type", "=", "mail.send").execute()).filter((j) =>
        j.payload.includes("victim@b.test"),
      );
    expect(await queued()).toHaveLength(0);
    // RATE_LIMIT_PER_ADDRESS=2: the same mailbox however it is capitalised or padded.
    const statuses = [];
    for (const [i, email] of ["victim@b.test", " Victim@B.test", "VICTIM@b.TEST"].entries())
      statuses.push((await post(email, `192.0.2.${100 + i}`)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(await queued()).toHaveLength(2);
  });

  it("answers 404 to a stranger's select all and sets no selection cookie", async () => {
    const res = await request(`/client/${projectId}`, {
      method: "POST",
      cookie: stranger,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "intent=select-all",
    });
    expect(res.status).toBe(404);
    expect(res.headers.getSetCookie().some((c) => c.includes("koala_selection"))).toBe(false);
  });

  it("marks every signed-in page and its data private and not to be stored", async () => {
    for (const url of ["/dashboard", `/client/${projectId}`, `/image/${imageId}`, `/client/${projectId}.data`]) {
      const res = await request(url, { cookie: editor });
      expect(res.status, url).toBe(200);
      expect(res.headers.get("Cache-Control"), url).toBe("private, no-store");
    }
  });

  it("answers /api/grid for a foreign or unknown id with a JSON 404 and the spec's message, and dumps nothing", async () => {
    const before = app.stderr().length;
    const foreign = await request(`/api/grid?project=${projectId}`, { cookie: stranger });
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual({ error: `No Projects Found with ID: ${projectId}` });
    const unknown = await request("/api/grid?board=nope", { cookie: editor });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "No Board Found with ID: nope" });
    expect(app.stderr().slice(before)).toBe("");
  });

  it("answers hostile search text on every page and API that searches with a normal answer, logs nothing, and keeps each person to their own projects", async () => {
    const before = app.stderr().length;
    const hostile = ['"', "NEAR(shelf", "*", "' OR 1=1 --", "%", ")(", '"unbalanced', 'a"b"c', "shelf -x", "x".repeat(3000), "🧃"];
    for (const h of hostile) {
      const q = encodeURIComponent(h);
      for (const url of [
        `/client/${projectId}?q=${q}`,
        `/${projectId}/board/${boardId}?q=${q}`,
        `/api/grid?project=${projectId}&q=${q.slice(0, 400)}`,
        `/api/grid?everywhere=1&q=${q.slice(0, 400)}`,
        `/result/keyword/${q}`,
      ]) {
        const res = await request(url, { cookie: editor });
        expect(res.status, `${url.slice(0, 80)}`).toBe(200);
        await res.arrayBuffer();
      }
      const sent = await request(`/search?q=${q}`, { cookie: editor });
      expect(sent.status).toBe(302);
      expect(sent.headers.get("Location")).toMatch(/^\/search\/keyword\/./);
    }
    // Text without a word finds nothing across projects (it does not list everything).
    expect((await (await request("/api/grid?everywhere=1&q=%22", { cookie: editor })).json()).total).toBe(0);
    // Each person searches their own projects only.
    expect((await (await request("/api/grid?everywhere=1&q=shelf", { cookie: editor })).json()).total).toBe(1);
    expect((await (await request("/api/grid?everywhere=1&q=shelf", { cookie: stranger })).json()).total).toBe(0);
    const theirs = await request("/result/keyword/shelf", { cookie: stranger });
    expect(await theirs.text()).toContain("No related images found:");
    expect((await request(`/api/grid?project=${projectId}&q=shelf`, { cookie: stranger })).status).toBe(404);
    expect(app.stderr().slice(before)).toBe("");
  });

  it("refuses an address that does not decode, or a NUL in the address or a field, with 400; nothing changes and the server stays up", async () => {
    const before = app.stderr().length;
    const boards = async () => (await db().selectFrom("boards").select("id").execute()).length;
    const boardsBefore = await boards();
    // Broken %-escapes, or escapes of bytes that are not UTF-8, anywhere in the path (Remix's routing answered 500).
    for (const url of [
      "/client/%E0%A4%A",
      "/client/%E0%A4%A0%",
      "/%ff",
      `/image/%C0%AF`,
      `/${projectId}/board/%E0%A4%A`,
      "/shared-board/%E0%A4%A",
      "/media/%E0/x",
    ]) {
      const res = await request(url, { cookie: editor });
      expect(res.status, url).toBe(400);
      expect(await res.text(), url).toBe("The address is malformed (a % escape that is not valid UTF-8).");
    }
    // A NUL in a query (SQLite's LIKE stopped at it: /all-boards?q=%00 listed every board) or in a path.
    for (const url of [
      "/all-boards?q=%00",
      "/all-boards?q=Bo%00ard",
      `/client/${projectId}?q=a%00b`,
      "/result/keyword/%00",
      `/api/grid?project=${projectId}&q=%00`,
      "/login?redirectTo=%00",
    ]) {
      const res = await request(url, { cookie: editor });
      expect(res.status, url).toBe(400);
      const text = await res.text();
      expect(text, url).toContain("The address holds a NUL character.");
      expect(text, url).not.toContain("Board");
    }
    // A NUL in a posted field, in each body type (PostgreSQL cannot store one), changes nothing.
    const newBoard = `/client/${projectId}/boards/new`;
    const multipart = new FormData();
    multipart.set("title", "Evil\u0000board");
    for (const body of [new URLSearchParams({ title: "Evil\u0000board" }), multipart]) {
      const res = await request(newBoard, { method: "POST", cookie: editor, body, headers: { Origin: app.base } });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("A field holds a NUL character.");
    }
    const json = await request("/api/selection", {
      method: "POST",
      cookie: editor,
      headers: { Origin: app.base, "Content-Type": "application/json" },
      body: JSON.stringify({ scope: "evil\u0000", ids: [] }),
    });
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({ error: "A field holds a NUL character." });
    expect(await boards()).toBe(boardsBefore);
    // The same words without the NUL still work: a search, a new board.
    expect((await request("/all-boards?q=Board", { cookie: editor })).status).toBe(200);
    // A file's bytes may hold any byte: only text fields are checked (the upload paths stream their own bodies).
    expect((await request("/healthz")).status).toBe(200);
    const logged = app.stderr().slice(before);
    expect(logged).not.toMatch(/\n\s+at /);
    for (const line of logged.split("\n").filter(Boolean)) expect(JSON.parse(line)).toMatchObject({ level: "warn", status: 400 });
  });

  it("echoes a malformed or huge id as typed, never NaN or a rounded number", async () => {
    for (const [url, message] of [
      ["/client/abc", "No Projects Found with ID: abc"],
      ["/client/12345678901234567890", "No Projects Found with ID: 12345678901234567890"],
      ["/upload/abc", "No Client with ID abc found."],
      [`/${projectId}/board/x%3Cb%3E`, "No Board Found with ID: x&lt;b&gt;"],
    ] as const) {
      const res = await request(url, { cookie: editor });
      expect(res.status, url).toBe(404);
      const html = await res.text();
      expect(html, url).toContain(message);
      expect(html).not.toContain("NaN");
    }
    // Query parameters the page cannot use are ignored, never a 500.
    for (const query of [`board=${"x".repeat(500)}`, "board=", "edit&from=//evil.example&v=abc"])
      expect((await request(`/image/${imageId}?${query}`, { cookie: editor })).status, query).toBe(200);
  });

  it("sends a person who has not accepted the terms to them first, from any page and any post", async () => {
    const page = await request(`/client/${projectId}`, { cookie: pendingTerms });
    expect(page.status).toBe(302);
    expect(page.headers.get("Location")).toBe(`/terms?redirectTo=${encodeURIComponent(`/client/${projectId}`)}`);
    const post = await request(`/client/${projectId}`, {
      method: "POST",
      cookie: pendingTerms,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "intent=select-all",
    });
    expect(post.status).toBe(302);
    expect(post.headers.get("Location")).toBe("/terms");
    expect((await request("/terms", { cookie: pendingTerms })).status).toBe(200);
  });

  it("shows a message of the local mailbox at /dev/mailbox/:id, its attachments as downloads", async () => {
    const dir = path.join(t.dataDir, "mailbox");
    const stored = {
      id: "1-test",
      from: "Koala",
      at: Date.now(),
      to: "a@b.test",
      subject: "Hello there",
      text: "The body of the message",
      attachments: [
        { filename: "values.csv", contentType: "text/csv; charset=utf-8", contentBase64: Buffer.from("Image ID\n1\n").toString("base64") },
      ],
    };
    await import("node:fs/promises").then((fs) =>
      fs.mkdir(dir, { recursive: true }).then(() => fs.writeFile(path.join(dir, "1-test.json"), JSON.stringify(stored))),
    );
    const list = await (await request("/dev/mailbox")).text();
    expect(list).toContain("Hello there");
    const one = await (await request("/dev/mailbox/1-test")).text();
    expect(one).toContain("The body of the message");
    expect(one).toContain(`download="values.csv"`);
    expect(one).toContain(`href="data:text/csv; charset=utf-8;base64,${Buffer.from("Image ID\n1\n").toString("base64")}"`);
    expect(readFileSync(path.join(dir, "1-test.json"), "utf8")).toContain("Hello there");
  });
});
