import { randomBytes } from "node:crypto";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { createBoard } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { boardScope, projectScope } from "~/models/scope.server";
import { createShareLinks } from "~/models/share-links.server";
import { storage } from "~/services/storage.server";
import { dialects, freshDatabase, PG_URL, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { sessionCookie, startAppServer, type AppServer } from "../helpers/server";
import { startTcpProxy } from "../helpers/tcp-proxy";

/**
 * An instance's life as an operator sees it (issue 26): `/healthz` says the process answers, `/readyz` whether it
 * can serve (database, object store, not shutting down), and SIGTERM drains: requests in flight finish within
 * SHUTDOWN_GRACE_SECONDS, what outlives it is cut and logged, and the process exits 0.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const exited = (app: AppServer) =>
  new Promise<number | null>((resolve) => {
    if (app.child.exitCode !== null) return resolve(app.child.exitCode);
    app.child.once("exit", (code) => resolve(code));
  });

/** Reads a socket's whole answer (until the server closes it). */
const answerOf = (socket: Socket) =>
  new Promise<string>((resolve) => {
    let text = "";
    socket.on("data", (c: Buffer) => (text += c.toString("latin1")));
    socket.on("close", () => resolve(text));
  });

describe.each(dialects)("an instance's readiness and shutdown (%s)", (dialect) => {
  let t: TestDatabase;
  let app: AppServer | undefined;
  let projectId: number;
  let editor: string;
  let shareZip: string;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const e = await makeUser();
    const project = await makeProject([{ actor: e.actor }]);
    projectId = project.id;
    editor = await sessionCookie(e.user.id);
    const scope = await projectScope(e.actor, project.id);
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const bytes = randomBytes(500_000);
      const file = { ...(await storedFakeFile(700 + i)), sizeBytes: bytes.length };
      await storage().put(file.storageKey, bytes);
      for (const key of [file.thumbKey, file.previewKey]) await storage().put(key, bytes.subarray(0, 100));
      ids.push(await insertImage(scope, file, meta(`Shelf ${i}`)));
    }
    const board = await boardScope(e.actor, (await createBoard(scope, { title: "Shelves", imageIds: ids })).id);
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "drain");
    shareZip = `${link!.path}/zip`;
  }, 120_000);
  afterEach(async () => {
    if (app && app.child.exitCode === null) await app.stop();
    app = undefined;
  });
  afterAll(async () => {
    await t?.drop();
  });

  const images = async () => (await db().selectFrom("images").select("id").where("project_id", "=", projectId).execute()).length;

  it("says it is ready when the database and the object store answer, and not when the store cannot be written", async () => {
    app = await startAppServer(t);
    const ready = await fetch(`${app.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("cache-control")).toBe("no-store");
    expect(await ready.json()).toEqual({ ready: true, database: "ok", storage: "ok" });
    if (dialect !== "sqlite") return; // the file store's own failure, once
    const objects = path.join(t.dataDir, "objects");
    renameSync(objects, `${objects}.away`);
    writeFileSync(objects, "not a folder");
    try {
      const down = await fetch(`${app.base}/readyz`);
      expect(down.status).toBe(503);
      const state = (await down.json()) as { ready: boolean; database: string; storage: string };
      expect(state).toMatchObject({ ready: false, database: "ok" });
      expect(state.storage).toMatch(/ENOTDIR|EEXIST/);
      expect((await fetch(`${app.base}/healthz`)).status).toBe(200);
    } finally {
      rmSync(objects);
      renameSync(`${objects}.away`, objects);
    }
    expect((await fetch(`${app.base}/readyz`)).status).toBe(200);
  });

  it("finishes an upload in flight when SIGTERM comes, refuses new connections, says 503 draining on a kept-alive one, and exits 0", async () => {
    app = await startAppServer(t, { SHUTDOWN_GRACE_SECONDS: "20", LOG_LEVEL: "info" });
    const { port } = new URL(app.base);
    const before = await images();
    // A kept-alive connection from before the signal, as a proxy holds one.
    const kept = connect(Number(port), "127.0.0.1");
    await new Promise((r) => kept.once("connect", r));
    // An upload that is still sending its body when the signal comes.
    const file = await jpeg(320, 240, "#aa3355");
    const head = `--zz\r\nContent-Disposition: form-data; name="files"; filename="late.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;
    const tail = `\r\n--zz--\r\n`;
    const length = Buffer.byteLength(head) + file.length + Buffer.byteLength(tail);
    const upload = connect(Number(port), "127.0.0.1");
    await new Promise((r) => upload.once("connect", r));
    const uploadAnswer = answerOf(upload);
    upload.write(
      `POST /upload/${projectId}/files HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${editor}\r\n` +
        `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: ${length}\r\n\r\n${head}`,
    );
    upload.write(file.subarray(0, 1000));
    await sleep(300);
    const exit = exited(app);
    app.child.kill("SIGTERM");
    await expect.poll(() => app!.output(), { timeout: 10_000, interval: 50 }).toContain('"msg":"shutting down"');
    // No new connection is taken...
    const refused = await fetch(`${app.base}/healthz`).then(
      () => "answered",
      (err: Error & { cause?: { code?: string } }) => err.cause?.code ?? err.message,
    );
    expect(refused).toBe("ECONNREFUSED");
    // ...and one already open hears that this instance is going.
    const keptAnswer = answerOf(kept);
    kept.write(`GET /readyz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    const readyz = await keptAnswer;
    expect(readyz).toMatch(/^HTTP\/1\.1 503/);
    expect(readyz).toMatch(/connection: close/i);
    expect(readyz).toContain('"shutdown":"draining"');
    // The upload's body goes on arriving, and the upload is taken whole.
    await sleep(500);
    upload.write(file.subarray(1000));
    upload.write(tail);
    const answer = await uploadAnswer;
    expect(answer).toMatch(/^HTTP\/1\.1 302/); // to the page that lists what was uploaded
    expect(answer).toMatch(/connection: close/i);
    expect(await exit).toBe(0);
    expect(await images()).toBe(before + 1);
    expect(app.output()).not.toContain("request cut by shutdown");
    expect(app.output()).toContain('"msg":"shut down"');
  }, 90_000);

  it("lets a ZIP on its way out finish when SIGTERM comes", async () => {
    app = await startAppServer(t, { SHUTDOWN_GRACE_SECONDS: "20" });
    const { port } = new URL(app.base);
    const socket = connect(Number(port), "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    const ended = new Promise((r) => socket.once("close", r));
    socket.write(
      `POST ${shareZip} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${app.base}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 5\r\n\r\nall=1`,
    );
    await expect.poll(() => chunks.length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
    socket.pause(); // the reader is slow: most of the ZIP is still to go when the signal comes
    const exit = exited(app);
    app.child.kill("SIGTERM");
    await sleep(500);
    socket.resume();
    await ended;
    const answer = Buffer.concat(chunks);
    const headEnd = answer.indexOf("\r\n\r\n");
    const head = answer.subarray(0, headEnd).toString("latin1");
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(answer.length - headEnd - 4).toBe(Number(/content-length: (\d+)/i.exec(head)![1]));
    expect(await exit).toBe(0);
  }, 90_000);

  it("cuts what outlives the grace period, says which request it cut, and still exits 0", async () => {
    app = await startAppServer(t, { SHUTDOWN_GRACE_SECONDS: "1" });
    const { port } = new URL(app.base);
    const stuck = connect(Number(port), "127.0.0.1");
    await new Promise((r) => stuck.once("connect", r));
    stuck.on("error", () => {});
    stuck.write(
      `POST /upload/${projectId}/files HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${editor}\r\n` +
        `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: 900000\r\n\r\n--zz\r\n`,
    );
    await sleep(300);
    const started = Date.now();
    const exit = exited(app);
    app.child.kill("SIGTERM");
    expect(await exit).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(app.output()).toMatch(/"msg":"request cut by shutdown","method":"POST","path":"\/upload\/\d+\/files","requestId":"[\w-]{36}"/);
    stuck.destroy();
  }, 60_000);
});

describe.runIf(PG_URL)("readiness while PostgreSQL refuses connections", () => {
  let t: TestDatabase;
  let app: AppServer | undefined;
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;

  beforeAll(async () => {
    t = await freshDatabase("postgres");
    proxy = await startTcpProxy(5432);
  });
  afterAll(async () => {
    await app?.stop();
    await proxy?.close();
    await t?.drop();
  });

  it("says 503 with the reason while the database refuses, 200 again once it is back; /healthz stays 200", async () => {
    const url = t.url.replace(/@[^/]+\//, `@127.0.0.1:${proxy.port}/`);
    expect(url).not.toBe(t.url);
    app = await startAppServer(t, { DATABASE_URL: url });
    expect((await fetch(`${app.base}/readyz`)).status).toBe(200);
    await proxy.close();
    const down = await fetch(`${app.base}/readyz`);
    expect(down.status).toBe(503);
    const state = (await down.json()) as { ready: boolean; database: string; storage: string };
    expect(state.ready).toBe(false);
    expect(state.storage).toBe("ok");
    expect(state.database).not.toBe("ok");
    expect((await fetch(`${app.base}/healthz`)).status).toBe(200);
    await proxy.open();
    await expect.poll(async () => (await fetch(`${app!.base}/readyz`)).status, { timeout: 15_000, interval: 200 }).toBe(200);
  }, 60_000);
});
