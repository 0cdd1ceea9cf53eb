import http from "node:http";
import { gunzipSync } from "node:zlib";
import compression from "compression";
import type { AddressInfo } from "node:net";
import { afterEach, expect, test } from "vitest";
import { writeBody } from "../../server/requests";

const CHUNK = 64 * 1024;
const servers: http.Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

/** A server answering with an endless body of 64 KiB chunks through writeBody; counts what it pulled from the source. */
async function endlessServer() {
  const state = { pulled: 0, cancelled: false };
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "application/octet-stream" });
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        state.pulled += CHUNK;
        controller.enqueue(new Uint8Array(CHUNK));
      },
      cancel() {
        state.cancelled = true;
      },
    });
    void writeBody(body, res).catch(() => {});
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, state };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("a response body is read at the pace the client takes it, and cancelled when the client goes away", async () => {
  const { port, state } = await endlessServer();
  const req = http.get({ port, host: "127.0.0.1" });
  const res = await new Promise<http.IncomingMessage>((resolve) => req.on("response", resolve));
  res.pause(); // a client that reads nothing for now
  await wait(300);
  // Socket buffers and the stream's queue hold a few MB at most; writing without waiting would have pulled hundreds.
  expect(state.pulled).toBeLessThan(16 * 1024 * 1024);
  const before = state.pulled;
  res.resume();
  await expect.poll(() => state.pulled, { timeout: 10_000, interval: 20 }).toBeGreaterThan(before);
  req.destroy();
  await expect.poll(() => state.cancelled, { timeout: 10_000, interval: 20 }).toBe(true);
});

test("a body that ends ends the response with every byte", async () => {
  const server = http.createServer((_req, res) => {
    const parts = ["a", "b", "c"].map((s) => new TextEncoder().encode(s.repeat(100_000)));
    void writeBody(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = parts.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }),
      res,
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const text = await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)).text();
  expect(text).toBe("a".repeat(100_000) + "b".repeat(100_000) + "c".repeat(100_000));
});

test("a client that goes away while the next chunk is still being read cancels the body all the same", async () => {
  // The source answers each read only when the test lets it: the client leaves in between (its 'close' comes while
  // writeBody waits for the chunk, not for the socket), and a write on the closed response returns no room.
  const state = { cancelled: false, reads: 0 };
  let next: (() => void) | null = null;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "application/octet-stream" });
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          state.reads += 1;
          if (state.reads === 1) return controller.enqueue(new Uint8Array(1024)); // fits: writeBody reads on
          await new Promise<void>((resolve) => (next = resolve));
          controller.enqueue(new Uint8Array(4 * 1024 * 1024));
        },
        cancel() {
          state.cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    void writeBody(body, res).catch(() => {});
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const req = http.get({ port: (server.address() as AddressInfo).port, host: "127.0.0.1" });
  const res = await new Promise<http.IncomingMessage>((resolve) => req.on("response", resolve));
  res.pause();
  await expect.poll(() => next !== null, { timeout: 10_000, interval: 10 }).toBe(true); // waiting for the 2nd chunk
  req.destroy();
  await wait(200); // the server has heard the close by now
  next!();
  await expect.poll(() => state.cancelled, { timeout: 5_000, interval: 20 }).toBe(true);
});

/** A server with the app's compression middleware in front of writeBody, answering with `body()`. */
async function compressingServer(body: () => ReadableStream<Uint8Array>) {
  const compress = compression();
  const server = http.createServer((req, res) => {
    compress(req as never, res as never, () => {
      res.setHeader("Content-Type", "application/json");
      void writeBody(body(), res).catch(() => {});
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** The raw answer to a GET that accepts gzip (fetch would unpack it and drop the header). */
function rawGet(url: string): Promise<{ encoding: string | undefined; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { "Accept-Encoding": "gzip" } }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => resolve({ encoding: res.headers["content-encoding"], bytes: Buffer.concat(parts) }));
      })
      .on("error", reject);
  });
}

const oneChunk = (text: string) => () => new Response(text).body!;

test("a body of one chunk under the compression threshold goes out as it is; a larger one is compressed", async () => {
  const small = JSON.stringify({ ok: true, key: "uploads/ab/cd/x" });
  const smallAnswer = await rawGet(await compressingServer(oneChunk(small)));
  expect(smallAnswer.encoding).toBeUndefined();
  expect(smallAnswer.bytes.toString()).toBe(small);
  const large = JSON.stringify({ cards: Array.from({ length: 200 }, (_, i) => ({ id: i, title: `Image ${i}` })) });
  const largeAnswer = await rawGet(await compressingServer(oneChunk(large)));
  expect(largeAnswer.encoding).toBe("gzip");
  expect(gunzipSync(largeAnswer.bytes).toString()).toBe(large);
});

test("a streamed body still goes out chunk by chunk: the first arrives before the source makes the second", async () => {
  let release: (() => void) | null = null;
  const url = await compressingServer(() => {
    let step = 0;
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          step += 1;
          if (step === 1) return controller.enqueue(new TextEncoder().encode("first "));
          if (step === 2) {
            await new Promise<void>((resolve) => (release = resolve));
            return controller.enqueue(new TextEncoder().encode("second"));
          }
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
  });
  const seen: string[] = [];
  const done = new Promise<void>((resolve) => {
    http.get(url, (res) => {
      res.setEncoding("utf8");
      res.on("data", (c: string) => seen.push(c));
      res.on("end", resolve);
    });
  });
  await expect.poll(() => seen.join(""), { timeout: 10_000, interval: 10 }).toBe("first ");
  expect(release).not.toBeNull();
  release!();
  await done;
  expect(seen.join("")).toBe("first second");
});

test("a source that fails while the socket is full fails the response once, with no unhandled rejection", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    let outcome: Promise<unknown> = Promise.resolve();
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/octet-stream" });
      let reads = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            reads += 1;
            if (reads === 1) return controller.enqueue(new Uint8Array(16));
            if (reads === 2) return controller.enqueue(new Uint8Array(32 * 1024 * 1024)); // fills the socket
            controller.error(new Error("source failed while the socket was full"));
          },
        },
        { highWaterMark: 0 },
      );
      outcome = writeBody(body, res).then(
        () => "ended",
        (err: Error) => err.message,
      );
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const req = http.get({ port: (server.address() as AddressInfo).port, host: "127.0.0.1" });
    req.on("error", () => {});
    const res = await new Promise<http.IncomingMessage>((resolve) => req.on("response", resolve));
    res.on("error", () => {});
    res.pause(); // the socket fills; the failure comes while writeBody waits for room
    await wait(300);
    res.resume(); // room again: writeBody reads the failure and ends the response with it
    expect(await outcome).toBe("source failed while the socket was full");
    await wait(50);
    expect(unhandled).toEqual([]);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});
