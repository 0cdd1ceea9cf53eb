import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createBoard } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { boardScope, projectScope, scopeKey } from "~/models/scope.server";
import { createShareLinks } from "~/models/share-links.server";
import { storage } from "~/services/storage.server";
import { selectionCookie } from "~/web/selection.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { sessionCookie, startAppServer, type AppServer } from "../helpers/server";

/**
 * Downloads whose clients stop reading (issue 24, item 18: sixteen connections that POSTed a share link's ZIP and
 * never read took every admission place, and every other person got 503 for as long as they stayed open). Real
 * server, real sockets that read the status line and then nothing: a ZIP of 16 MB is far more than the loopback
 * socket buffers hold, so the server's writes stall as they would for a real reader that stopped.
 */
const IMAGES = 40;
const ORIGINAL_BYTES = 400_000;

interface Stalled {
  socket: Socket;
  status: number;
  head: string;
}

describe.each(dialects)("stalled downloads (%s)", (dialect) => {
  let t: TestDatabase;
  let app: AppServer | undefined;
  let projectId: number;
  let shareUrl: string;
  let editorCookie: string;
  let otherCookie: string;
  let originalPath: string;
  const open: Socket[] = [];

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const editor = await makeUser();
    const other = await makeUser();
    const project = await makeProject([{ actor: editor.actor }, { actor: other.actor }]);
    projectId = project.id;
    const scope = await projectScope(editor.actor, project.id);
    const ids: number[] = [];
    for (let i = 0; i < IMAGES; i++) {
      // Random bytes do not shrink: the ZIP is as large as the originals.
      const bytes = randomBytes(ORIGINAL_BYTES);
      const file = { ...(await storedFakeFile(900 + i)), sizeBytes: bytes.length };
      await storage().put(file.storageKey, bytes);
      for (const key of [file.thumbKey, file.previewKey]) await storage().put(key, bytes.subarray(0, 100));
      ids.push(await insertImage(scope, file, meta(`Shelf ${i}`)));
      if (i === 0) originalPath = `/media/${ids[0]}/${file.storageKey.replaceAll("/", "~")}?download`;
    }
    const board = await boardScope(editor.actor, (await createBoard(scope, { title: "Everything", imageIds: ids })).id);
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "stall");
    shareUrl = link!.path;
    const selection = (await selectionCookie({ scope: scopeKey(scope), all: true, ids: [] })).split(";")[0]!;
    editorCookie = `${await sessionCookie(editor.user.id)}; ${selection}`;
    otherCookie = await sessionCookie(other.user.id);
  }, 120_000);
  afterEach(async () => {
    for (const socket of open.splice(0)) socket.destroy();
    await app?.stop();
    app = undefined;
  });
  afterAll(async () => {
    await t?.drop();
  });

  /** Sends a POST and reads its answer's head, then reads nothing more: the socket stays open and paused. */
  function stall(path: string, headers: Record<string, string> = {}): Promise<Stalled> {
    const { port } = new URL(app!.base);
    const socket = connect(Number(port), "127.0.0.1");
    open.push(socket);
    const body = path.includes("/shared-board/") ? "all=1" : "";
    const lines = [
      `POST ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      `Origin: ${app!.base}`,
      "Content-Type: application/x-www-form-urlencoded",
      `Content-Length: ${body.length}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${lines.join("\r\n")}\r\n\r\n${body}`);
    return new Promise((resolve, reject) => {
      let head = "";
      socket.on("error", reject);
      socket.on("data", function onData(chunk: Buffer) {
        head += chunk.toString("latin1");
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        socket.off("data", onData);
        socket.pause();
        resolve({ socket, status: Number(head.slice(9, 12)), head: head.slice(0, end) });
      });
    });
  }
  const projectZip = () => `/client/${projectId}/bulk/zip`;
  const shareZip = () => `${shareUrl}/zip`;

  /** A whole answer, read to its end. */
  async function fetchAll(path: string, init: RequestInit & { cookie?: string } = {}) {
    const res = await fetch(`${app!.base}${path}`, {
      ...init,
      redirect: "manual",
      headers: { Origin: app!.base, ...(init.cookie ? { Cookie: init.cookie } : {}), ...(init.headers as Record<string, string>) },
    });
    return { res, bytes: Buffer.from(await res.arrayBuffer()) };
  }
  const form = { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" } };

  it("a started download gives back its request place: 32 stalled ZIPs, and another person's pages stay 200", async () => {
    // Four request places; the download limits out of the way, so only the admission places are under test.
    app = await startAppServer(t, {
      MAX_CONCURRENT_REQUESTS: "4",
      QUEUE_WAIT_SECONDS: "2",
      MAX_CONCURRENT_DOWNLOADS: "64",
      DOWNLOADS_PER_CLIENT: "64",
      DOWNLOADS_PER_LINK: "64",
    });
    const stalled: Stalled[] = [];
    for (let i = 0; i < 16; i++) stalled.push(await stall(shareZip()), await stall(projectZip(), { Cookie: editorCookie }));
    expect(stalled.map((s) => s.status)).toEqual(Array(32).fill(200));
    for (const s of stalled) expect(s.head).toMatch(/content-type: application\/zip/i);
    // Every one of them is still open, with most of its ZIP unsent.
    expect(stalled.every((s) => !s.socket.destroyed)).toBe(true);
    for (let i = 0; i < 10; i++) {
      const page = await fetchAll("/dashboard", { cookie: otherCookie });
      expect(page.res.status).toBe(200);
      expect((await fetchAll("/login")).res.status).toBe(200);
      const media = await fetchAll(originalPath, { cookie: otherCookie });
      expect(media.res.status).toBe(200);
      expect(media.bytes.length).toBe(ORIGINAL_BYTES);
    }
    expect(app.output()).not.toContain("request refused");
  }, 120_000);

  it("limits downloads per person, per address and per share link with 429 and Retry-After, and a place comes back when its client goes away", async () => {
    app = await startAppServer(t, { TRUST_PROXY: "1", DOWNLOADS_PER_CLIENT: "2", DOWNLOADS_PER_LINK: "3" });
    // Per person: two project ZIPs run, the third is refused; another person still downloads.
    const mine = [await stall(projectZip(), { Cookie: editorCookie }), await stall(projectZip(), { Cookie: editorCookie })];
    expect(mine.map((s) => s.status)).toEqual([200, 200]);
    const refused = await fetchAll(projectZip(), { ...form, cookie: editorCookie });
    expect(refused.res.status).toBe(429);
    expect(refused.res.headers.get("retry-after")).toBe("5");
    expect(refused.bytes.toString()).toContain("Too many downloads at once. Please wait for one to finish, then try again.");
    const original = await fetchAll(originalPath, { cookie: editorCookie });
    expect(original.res.status).toBe(429); // an original asked for as a file is a download too
    const others = await fetchAll(originalPath, { cookie: otherCookie });
    expect(others.res.status).toBe(200);
    expect(others.bytes.length).toBe(ORIGINAL_BYTES);

    // The client of one goes away: its place comes back.
    mine[0]!.socket.destroy();
    await expect
      .poll(async () => (await fetchAll(originalPath, { cookie: editorCookie })).res.status, { timeout: 10_000, interval: 100 })
      .toBe(200);

    // Per address, for a share link's visitors (the address the trusted proxy gives).
    const fromOne = [
      await stall(shareZip(), { "X-Forwarded-For": "203.0.113.1" }),
      await stall(shareZip(), { "X-Forwarded-For": "203.0.113.1" }),
    ];
    expect(fromOne.map((s) => s.status)).toEqual([200, 200]);
    const third = await fetchAll(shareZip(), { ...form, body: "all=1", headers: { ...form.headers, "X-Forwarded-For": "203.0.113.1" } });
    expect(third.res.status).toBe(429);
    // Per link: a third address still fits the link's three, a fourth address does not.
    expect((await stall(shareZip(), { "X-Forwarded-For": "203.0.113.2" })).status).toBe(200);
    const overLink = await fetchAll(shareZip(), { ...form, body: "all=1", headers: { ...form.headers, "X-Forwarded-For": "203.0.113.3" } });
    expect(overLink.res.status).toBe(429);
    // A refusal did no work and holds nothing: the other person is unaffected throughout.
    expect((await fetchAll("/dashboard", { cookie: otherCookie })).res.status).toBe(200);
  }, 120_000);

  it("cuts a response whose client reads nothing for RESPONSE_IDLE_SECONDS, and gives its place back; a reader that pauses less is served whole", async () => {
    app = await startAppServer(t, { RESPONSE_IDLE_SECONDS: "2", DOWNLOADS_PER_CLIENT: "1" });
    const stalled = await stall(shareZip());
    expect(stalled.status).toBe(200);
    expect((await fetchAll(shareZip(), { ...form, body: "all=1" })).res.status).toBe(429);
    await expect.poll(() => app!.output(), { timeout: 15_000, interval: 100 }).toContain('"msg":"response cut"');
    // Its place came back: a reader that pauses half a second every 2 MB (less than the limit) gets the whole ZIP.
    const { port } = new URL(app.base);
    const socket = connect(Number(port), "127.0.0.1");
    open.push(socket);
    socket.write(
      `POST ${shareZip()} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${app.base}\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5\r\n\r\nall=1`,
    );
    const chunks: Buffer[] = [];
    const ended = new Promise((r) => socket.once("end", r));
    let pauses = 0;
    let sincePause = 0;
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      sincePause += c.length;
      if (sincePause < 2_000_000) return;
      sincePause = 0;
      pauses += 1;
      socket.pause();
      setTimeout(() => socket.resume(), 500);
    });
    await ended;
    const answer = Buffer.concat(chunks);
    const headEnd = answer.indexOf("\r\n\r\n");
    const head = answer.subarray(0, headEnd).toString("latin1");
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
    expect(length).toBeGreaterThan(IMAGES * ORIGINAL_BYTES);
    expect(answer.length - headEnd - 4).toBe(length);
    expect(pauses).toBeGreaterThanOrEqual(4); // it did pause, again and again, while the server waited
    expect(app.output().match(/"msg":"response cut"/g)).toHaveLength(1);
  }, 120_000);
});
