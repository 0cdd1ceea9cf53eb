import http from "node:http";
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
