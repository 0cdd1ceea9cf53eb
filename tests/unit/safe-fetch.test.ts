import dns from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it, expect, beforeAll, afterAll, vi } from "vitest";
import { FetchRefused, isBlockedAddress, safeFetch } from "~/lib/safe-fetch.server";

/** What the local server saw: hits per path, the last Host header, and whether a streamed body was cut off. */
const seen = { hits: new Map<string, number>(), host: "", closedEarly: new Map<string, Promise<boolean>>() };
let server: http.Server;
let port: number;
let base: string;

/** Streams `chunk` every 5 ms (with or without a Content-Length far above it) until the client hangs up. */
function stream(path: string, res: http.ServerResponse, declared?: number) {
  res.writeHead(200, declared ? { "Content-Type": "application/octet-stream", "Content-Length": declared } : {});
  const chunk = Buffer.alloc(1024, 1);
  const timer = setInterval(() => res.write(chunk), 5);
  seen.closedEarly.set(
    path,
    new Promise((resolve) =>
      res.on("close", () => {
        clearInterval(timer);
        resolve(!res.writableFinished);
      }),
    ),
  );
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    seen.hits.set(path, (seen.hits.get(path) ?? 0) + 1);
    seen.host = req.headers.host ?? "";
    if (path === "/hello") return void res.writeHead(200, { "Content-Type": "text/plain" }).end(`hello ${req.headers["user-agent"]}`);
    if (path === "/to-localhost") return void res.writeHead(302, { Location: `http://localhost:${port}/x` }).end();
    if (path === "/to-relative") return void res.writeHead(301, { Location: "hello?from=redirect" }).end();
    if (path === "/to-ftp") return void res.writeHead(307, { Location: "ftp://127.0.0.1/file" }).end();
    if (path === "/loop") return void res.writeHead(302, { Location: "/loop" }).end();
    if (path === "/big-declared") return void stream(path, res, 10_000_000);
    if (path === "/big-chunked") return void stream(path, res);
    if (path === "/hang") return; // never answers
    res.writeHead(404).end("not here");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const local = { allowedPrivateHosts: ["127.0.0.1"], maxBytes: 100_000, timeoutMs: 3000 };

/** The FetchRefused a call ends with (fails the test if it resolves or throws something else). */
async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FetchRefused);
  return (error as FetchRefused).message;
}

describe("isBlockedAddress", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.255.255.254", true],
    ["10.0.0.1", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["255.255.255.255", true],
    ["224.0.0.1", true],
    ["198.18.0.1", true],
    ["192.0.2.1", true],
    ["203.0.113.7", true],
    ["::", true],
    ["::1", true],
    ["fe80::1", true],
    ["fd00::1", true],
    ["fc00::1", true],
    ["ff02::1", true],
    ["2001:db8::1", true],
    ["2002:7f00:1::1", true], // 6to4
    ["2001:0:4136:e378::1", true], // Teredo
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["::ffff:10.1.2.3", true],
    ["64:ff9b::a9fe:a9fe", true], // NAT64 of 169.254.169.254
    ["fe80::1%eth0", true],
    ["not-an-address", true],
    ["8.8.8.8", false],
    ["1.1.1.1", false],
    ["172.32.0.1", false],
    ["100.128.0.1", false],
    ["2606:4700:4700::1111", false],
    ["2a00:1450:4001:80b::200e", false],
    ["::ffff:8.8.8.8", false],
    ["64:ff9b::808:808", false], // NAT64 of 8.8.8.8
  ])("%s -> %s", (address, blocked) => {
    expect(isBlockedAddress(address)).toBe(blocked);
  });
});

describe("safeFetch", () => {
  it("refuses the local server unless 127.0.0.1 is allowed", async () => {
    expect(await refusal(safeFetch(`${base}/hello`, { maxBytes: 1000 }))).toBe("Refused: 127.0.0.1 is a private address");
    const result = await safeFetch(`${base}/hello`, local);
    expect(result.body.toString()).toBe("hello Koala-WSC-Import/1");
    expect(result.contentType).toBe("text/plain");
    expect(result.finalUrl).toBe(`${base}/hello`);
  });

  it("allows one origin (host:port) on that port only", async () => {
    const origin = { maxBytes: 1000, allowedPrivateHosts: [`127.0.0.1:${port}`] };
    expect((await safeFetch(`${base}/hello`, origin)).body.toString()).toBe("hello Koala-WSC-Import/1");
    const otherPort = { maxBytes: 1000, allowedPrivateHosts: [`127.0.0.1:${port + 1}`] };
    expect(await refusal(safeFetch(`${base}/hello`, otherPort))).toBe("Refused: 127.0.0.1 is a private address");
  });

  it("matches allowed host names literally", async () => {
    expect(await refusal(safeFetch(`http://localhost:${port}/hello`, local))).toMatch(/^Refused: localhost is a private address/);
    const result = await safeFetch(`http://localhost:${port}/hello`, { ...local, allowedPrivateHosts: ["localhost"] });
    expect(result.body.toString()).toBe("hello Koala-WSC-Import/1");
    expect(seen.host).toBe(`localhost:${port}`);
  });

  it("connects to the address it checked, never asking DNS again (no rebinding)", async () => {
    // Only the checked lookup knows this name: a second resolution at connect time would fail.
    const lookup = vi.spyOn(dns.promises, "lookup").mockResolvedValue([{ address: "127.0.0.1", family: 4 }] as never);
    try {
      const result = await safeFetch(`http://pinned.invalid:${port}/hello`, { ...local, allowedPrivateHosts: ["pinned.invalid"] });
      expect(result.body.toString()).toBe("hello Koala-WSC-Import/1");
      expect(seen.host).toBe(`pinned.invalid:${port}`);
      expect(lookup).toHaveBeenCalledTimes(1);
    } finally {
      lookup.mockRestore();
    }
  });

  it("refuses a host when any of its addresses is private", async () => {
    const lookup = vi.spyOn(dns.promises, "lookup").mockResolvedValue([
      { address: "93.184.215.14", family: 4 },
      { address: "10.0.0.5", family: 4 },
    ] as never);
    try {
      expect(await refusal(safeFetch("http://mixed.invalid/", { maxBytes: 1000 }))).toBe("Refused: mixed.invalid is a private address");
    } finally {
      lookup.mockRestore();
    }
  });

  it("checks every redirect hop again", async () => {
    expect(await refusal(safeFetch(`${base}/to-localhost`, local))).toMatch(/^Refused: localhost is a private address/);
    expect(await refusal(safeFetch(`${base}/to-ftp`, local))).toBe("Refused: only http and https addresses are allowed");
  });

  it("follows a relative redirect on the same allowed host", async () => {
    const result = await safeFetch(`${base}/to-relative`, local);
    expect(result.body.toString()).toBe("hello Koala-WSC-Import/1");
    expect(result.finalUrl).toBe(`${base}/hello?from=redirect`);
  });

  it("stops a redirect loop after maxRedirects", async () => {
    seen.hits.delete("/loop");
    expect(await refusal(safeFetch(`${base}/loop`, local))).toBe("Refused: too many redirects");
    expect(seen.hits.get("/loop")).toBe(4); // the first request and three redirects
    expect(await refusal(safeFetch(`${base}/loop`, { ...local, maxRedirects: 0 }))).toBe("Refused: too many redirects");
  });

  it("refuses other schemes and credentials", async () => {
    expect(await refusal(safeFetch("file:///etc/passwd", local))).toBe("Refused: only http and https addresses are allowed");
    expect(await refusal(safeFetch("ftp://127.0.0.1/pub/file", local))).toBe("Refused: only http and https addresses are allowed");
    expect(await refusal(safeFetch("not a url", local))).toBe("Refused: not a valid address");
    const message = await refusal(safeFetch(`http://user:pw@127.0.0.1:${port}/hello`, local));
    expect(message).toBe("Refused: addresses with a user name or password are not allowed");
    expect(message).not.toContain("pw");
  });

  it.each([
    ["a declared Content-Length", "/big-declared"],
    ["a chunked body", "/big-chunked"],
  ])("refuses a body over maxBytes with %s, closing the connection early", async (_, path) => {
    const started = Date.now();
    expect(await refusal(safeFetch(`${base}${path}`, { ...local, maxBytes: 4000 }))).toBe("Refused: the file is larger than 3.9 KB");
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await seen.closedEarly.get(path)).toBe(true);
  });

  it("gives up on a server that never answers", async () => {
    const started = Date.now();
    expect(await refusal(safeFetch(`${base}/hang`, { ...local, timeoutMs: 300 }))).toBe("Refused: no answer within 0.3 s");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("names the status of a non-2xx answer", async () => {
    expect(await refusal(safeFetch(`${base}/missing`, local))).toBe("Refused: the server answered 404");
  });

  it("refuses a closed port as a connection failure", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await refusal(safeFetch(`http://127.0.0.1:${closedPort}/`, local))).toBe("Refused: could not connect to 127.0.0.1");
  });

  it("rejects with the caller's reason when the caller aborts", async () => {
    const controller = new AbortController();
    const pending = safeFetch(`${base}/hang`, { ...local, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("cancelled")), 50);
    await expect(pending).rejects.toThrow("cancelled");
  });

  it("never puts the query string or credentials in its messages", async () => {
    const query = "?token=secret123";
    const messages = await Promise.all([
      refusal(safeFetch(`${base}/hello${query}`, { maxBytes: 1000 })),
      refusal(safeFetch(`${base}/missing${query}`, local)),
      refusal(safeFetch(`${base}/hang${query}`, { ...local, timeoutMs: 300 })),
      refusal(safeFetch(`${base}/big-chunked${query}`, { ...local, maxBytes: 2000 })),
      refusal(safeFetch(`http://user:secret123@127.0.0.1:${port}/${query}`, local)),
      refusal(safeFetch(`ftp://127.0.0.1/${query}`, local)),
      refusal(safeFetch(`http://localhost:${port}/${query}`, local)),
    ]);
    for (const message of messages) expect(message).not.toContain("secret123");
  });
});
