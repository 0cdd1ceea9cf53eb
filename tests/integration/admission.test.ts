import { connect, type AddressInfo, type Socket } from "node:net";
import type { Server } from "node:http";
import express from "express";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { admission } from "../../server/admission";
import { freshDatabase, type TestDatabase } from "../helpers/db";
import { startServer, type RunningServer } from "../helpers/server";

/**
 * Admission control (server/admission.mjs): a busy server answers 503 with Retry-After at once instead of letting
 * requests hang. First the middleware on a small Express app with handlers whose timing the test controls, then
 * the real server with a tiny limit.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const settled = { timeout: 10_000, interval: 10 };

interface Logged {
  msg: string;
  fields: Record<string, unknown>;
}

describe("admission control: the middleware", () => {
  // Handlers at /hold/:name wait until the test releases them: the test decides what runs when, and checks the
  // middleware's own counters before each next step, so a slow machine changes how long a test takes, never its result.
  let server: Server | undefined;
  let stats: () => { running: number; waiting: number };
  let refused: () => Record<string, number>;
  const logged: Logged[] = [];
  const log = { warn: (msg: string, fields: Record<string, unknown>) => logged.push({ msg, fields }) };
  const entered: string[] = [];
  const gates = new Map<string, () => void>();
  let lateWrites = 0;
  /** Turns of the event loop, counted in its check phase while a test needs it; each start noted with its turn. */
  let turn = 0;
  let counting = false;
  const countTurns = () => {
    turn += 1;
    if (counting) setImmediate(countTurns);
  };
  const starts: { name: string; turn: number }[] = [];

  const gate = (name: string) => new Promise<void>((release) => gates.set(name, release));
  const release = async (name: string) => {
    await expect.poll(() => gates.has(name), settled).toBe(true);
    gates.get(name)!();
  };

  async function serve(limits: { concurrency: number; queue: number; waitMs: number; timeoutMs: number }) {
    const app = express();
    const middleware = admission(limits, log, (req: express.Request) => req.path.startsWith("/upload"));
    // Places and queue; what /metrics reports as refused is read apart.
    stats = () => ({ running: middleware.stats().running, waiting: middleware.stats().waiting });
    refused = () => middleware.stats().refused;
    app.use(middleware);
    const hold = async (req: express.Request, res: express.Response) => {
      const name = String(req.params.name);
      entered.push(name);
      await gate(name);
      if (res.headersSent) lateWrites += 1;
      else res.send(`done ${name}`);
    };
    app.get("/hold/:name", hold);
    app.get("/upload/:name", hold);
    app.get("/quick", (_req, res) => void res.send("quick"));
    // Headers and a first chunk at once, the rest when the test releases it: a download whose client reads slowly.
    app.get("/stream/:name", async (req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.write("first ");
      await gate(String(req.params.name));
      res.end("last");
    });
    // Mounted a second time on this path, as server/index.ts mounts it on the media paths and again on everything.
    app.get("/twice", middleware, (_req, res) => void res.json(stats()));
    app.get("/turn/:name", (req, res) => {
      starts.push({ name: String(req.params.name), turn });
      res.send("ok");
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server!.once("listening", r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  afterEach(async () => {
    for (const open of gates.values()) open();
    await new Promise((r) => (server ? server.close(r) : r(null)));
    server = undefined;
    logged.length = 0;
    entered.length = 0;
    gates.clear();
    lateWrites = 0;
    counting = false;
    starts.length = 0;
  });

  it("runs up to the limit, queues the next in order, and refuses past the queue with 503 and Retry-After", async () => {
    const base = await serve({ concurrency: 1, queue: 1, waitMs: 60_000, timeoutMs: 60_000 });
    const first = fetch(`${base}/hold/a`);
    await expect.poll(stats, settled).toEqual({ running: 1, waiting: 0 });
    const second = fetch(`${base}/hold/b`);
    await expect.poll(stats, settled).toEqual({ running: 1, waiting: 1 });
    const third = await fetch(`${base}/hold/c`);
    expect(third.status).toBe(503);
    expect(third.headers.get("retry-after")).toBe("2");
    expect(await third.text()).toBe("The server is busy. Please try again in a moment.");
    expect(entered).toEqual(["a"]); // the queued one waits while the first runs
    await release("a");
    expect(await (await first).text()).toBe("done a");
    await release("b");
    expect(await (await second).text()).toBe("done b");
    expect(entered).toEqual(["a", "b"]);
    expect(logged).toEqual([{ msg: "request refused", fields: { method: "GET", path: "/hold/c", status: 503, reason: "queue full" } }]);
    expect(refused()).toEqual({ queue_full: 1, waited: 0, timeout: 0 });
  });

  it("starts one request per turn of the event loop, in the order they came, however many arrived together", async () => {
    const base = await serve({ concurrency: 10, queue: 10, waitMs: 60_000, timeoutMs: 60_000 });
    const { port } = new URL(base);
    // Five open connections, then five requests written in one go while the loop is held: they reach the server in
    // one turn, as requests on busy connections do. Started at once, all five would share that turn.
    const sockets: Socket[] = [];
    for (let i = 0; i < 5; i++) {
      const socket = connect(Number(port), "127.0.0.1");
      await new Promise((r) => socket.once("connect", r));
      sockets.push(socket);
    }
    const answered = sockets.map(
      (socket) =>
        new Promise<string>((resolve) => {
          let text = "";
          socket.on("data", (chunk) => {
            text += String(chunk);
            if (text.endsWith("ok")) resolve(text);
          });
        }),
    );
    counting = true;
    setImmediate(countTurns);
    sockets.forEach((socket, i) => socket.write(`GET /turn/r${i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    const until = Date.now() + 50;
    while (Date.now() < until); // the loop is held: every request is in the server's socket buffers before it reads
    for (const text of await Promise.all(answered)) expect(text).toMatch(/^HTTP\/1\.1 200/);
    for (const socket of sockets) socket.destroy();
    expect(starts.map((s) => s.name)).toEqual(["r0", "r1", "r2", "r3", "r4"]);
    const turns = starts.map((s) => s.turn);
    expect(new Set(turns).size, `turns: ${turns.join(", ")}`).toBe(5);
    expect(turns).toEqual([...turns].sort((a, b) => a - b));
  });

  it("counts a request that passes it twice once: it never waits in the queue for a second place", async () => {
    const base = await serve({ concurrency: 1, queue: 10, waitMs: 2_000, timeoutMs: 60_000 });
    const res = await fetch(`${base}/twice`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ running: 1, waiting: 0 }); // as the handler saw it
    await expect.poll(stats, settled).toEqual({ running: 0, waiting: 0 });
    expect(logged).toEqual([]);
  });

  it("bounds the wait in the queue: a request that waited too long gets 503 instead of hanging", async () => {
    const base = await serve({ concurrency: 1, queue: 10, waitMs: 100, timeoutMs: 60_000 });
    const first = fetch(`${base}/hold/a`);
    await expect.poll(stats, settled).toEqual({ running: 1, waiting: 0 });
    // Answered while the first still runs (it is released only afterwards): the wait ended, not the work before it.
    const waited = await fetch(`${base}/hold/b`);
    expect(waited.status).toBe(503);
    expect(logged.map((l) => l.fields.reason)).toEqual(["waited 0.1 s"]);
    expect(refused()).toEqual({ queue_full: 0, waited: 1, timeout: 0 });
    expect(stats()).toEqual({ running: 1, waiting: 0 });
    await release("a");
    expect((await first).status).toBe(200);
    expect(entered).toEqual(["a"]);
  });

  it("answers 503 when a request runs past the time limit, drops its late answer, and frees its place", async () => {
    const base = await serve({ concurrency: 1, queue: 10, waitMs: 60_000, timeoutMs: 150 });
    const res = await fetch(`${base}/hold/a`);
    expect(res.status).toBe(503);
    expect(logged.map((l) => l.fields.reason)).toEqual(["no answer within 0.15 s"]);
    expect(refused()).toEqual({ queue_full: 0, waited: 0, timeout: 1 });
    expect(stats()).toEqual({ running: 0, waiting: 0 }); // its place is free while its work still runs
    expect(await (await fetch(`${base}/quick`)).text()).toBe("quick");
    await release("a");
    await expect.poll(() => lateWrites, settled).toBe(1);
  });

  it("frees a request's place once its headers are sent, while its body is still going out", async () => {
    const base = await serve({ concurrency: 1, queue: 0, waitMs: 60_000, timeoutMs: 60_000 });
    const streaming = await fetch(`${base}/stream/s`);
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("first ");
    expect(stats()).toEqual({ running: 0, waiting: 0 });
    // The one place is free: with no queue at all, another request runs at once.
    expect(await (await fetch(`${base}/quick`)).text()).toBe("quick");
    await release("s");
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    expect(rest).toBe("last");
    expect(stats()).toEqual({ running: 0, waiting: 0 }); // counted once: its end does not free a second place
    expect(await (await fetch(`${base}/quick`)).text()).toBe("quick");
    expect(logged).toEqual([]);
  });

  it("lets exempt requests (streamed uploads) through uncounted and untimed", async () => {
    const base = await serve({ concurrency: 1, queue: 0, waitMs: 60_000, timeoutMs: 100 });
    const timed = fetch(`${base}/hold/a`);
    await expect.poll(stats, settled).toEqual({ running: 1, waiting: 0 });
    const upload = fetch(`${base}/upload/u`); // admitted although the one place is taken and the queue has none
    await expect.poll(() => entered, settled).toEqual(["a", "u"]);
    expect(stats()).toEqual({ running: 1, waiting: 0 });
    expect((await timed).status).toBe(503); // the counted one ran past its 100 ms...
    await sleep(200); // ...and the upload is still going, well past it
    await release("u");
    const done = await upload;
    expect(done.status).toBe(200);
    expect(await done.text()).toBe("done u");
  });
});

describe("admission control: the real server", () => {
  let t: TestDatabase;
  let server: RunningServer;
  beforeAll(async () => {
    t = await freshDatabase("sqlite");
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, MAX_CONCURRENT_REQUESTS: "1", MAX_QUEUED_REQUESTS: "0" });
  });
  afterAll(async () => {
    await server?.stop();
    await t?.drop();
  });

  it("refuses what it cannot take with 503 + Retry-After, answers the rest, and stays up", async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const res = await fetch(`${server.base}/login`);
        await res.text(); // the whole answer, so the one that ran has finished
        return res;
      }),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses).toContain(200);
    expect(statuses).toContain(503);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    expect(answers.find((r) => r.status === 503)!.headers.get("retry-after")).toBe("2");
    // A path under /media that no media route takes passes admission twice (server/index.ts mounts it there and on
    // everything): it is counted once, and reaches the app's 404 although the one place is its own.
    await expect.poll(async () => (await fetch(`${server.base}/media/x`)).status, settled).toBe(404);
    // Static files and the health check are not limited; afterwards the server answers normally.
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
    // Its place is free again once the server has seen the last answer finish (a moment after the client read it).
    await expect.poll(async () => (await fetch(`${server.base}/login`)).status, settled).toBe(200);
    expect(server.output()).toContain('"reason":"queue full"');
  });
});
