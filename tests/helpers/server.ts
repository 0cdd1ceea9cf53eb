import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { signIn } from "~/sessions.server";
import type { TestDatabase } from "./db";
import { VANISHED_SCHEMA } from "./pg-race";

/**
 * The built app (build/server.js and build/server/, so `npm run build` first; npm test builds before it runs the suites),
 * started as its own process on a free loopback port, over real HTTP, its output kept for the test to read.
 */
const SERVER = path.resolve("build/server.js");

const PORTS_PER_WORKER = 1_000;
/** 20000 + 12 × 1000 stays below the ephemeral range's 32768. */
const WORKER_RANGES = 12;
let nextPort = process.pid % PORTS_PER_WORKER;

/**
 * A free port on loopback for a server a test starts later. Not one the kernel picks: a port it handed out (from
 * the ephemeral range, 32768–60999 on Linux) can go to another socket, an outgoing connection or another file's
 * server, before this test's server binds it (seen when two vitest workers ran side by side: an instance behind
 * nginx found its port taken). Each vitest worker takes its ports from a range of its own below the ephemeral
 * range (20000 + 1000 per worker), the next one that binds.
 */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? 0) % WORKER_RANGES;
  for (let tries = 0; tries < PORTS_PER_WORKER; tries++) {
    const port = 20_000 + worker * PORTS_PER_WORKER + (nextPort++ % PORTS_PER_WORKER);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in this worker's range (${20_000 + worker * PORTS_PER_WORKER}…)`);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

export interface RunningServer {
  base: string;
  port: number;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
}
export type AppServer = RunningServer;

/** `env` adds to (or, with undefined, removes from) the test's environment and these defaults. */
type Env = Record<string, string | undefined>;
const baseEnv = (port: number): Env => ({
  ...process.env,
  NODE_ENV: "production",
  KOALA_ENV: "development",
  PORT: String(port),
  HOST: "127.0.0.1",
  DEMO_SEED: "off",
  LOG_LEVEL: "warn",
});

function launch(env: Env, port: number) {
  const merged: Env = { ...baseEnv(port), ...env };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  const child = spawn(process.execPath, [SERVER], { env: merged as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => {
    output += c.toString();
    stderr += c.toString();
  });
  return { child, output: () => output, stderr: () => stderr };
}

/**
 * Starts the server and waits (up to a minute: a loaded machine is slow to start it) until /healthz answers.
 * A boot that died of another test run's schema vanishing under its migration is started again (pg-race.ts).
 */
export async function startServer(env: Env, port?: number): Promise<RunningServer> {
  port ??= await freePort();
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, port);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !VANISHED_SCHEMA.test(error.message)) throw error;
    }
  }
}

async function startOnce(env: Env, port: number): Promise<RunningServer> {
  const { child, output, stderr } = launch(env, port);
  const base = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (
      await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { base, port, child, output, stderr, stop };
    if (child.exitCode !== null) throw new Error(`The server exited with code ${child.exitCode}:\n${output()}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`The server did not start within 60 s:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The app on the test's database and DATA_DIR, without its job runner (on `port` when given: a test whose other
 * servers must know the app's address first, such as an OpenID Provider's redirect URIs). The session secret is the one the test
 * process generated into DATA_DIR, so cookies made by `sessionCookie` are valid there.
 */
export function startAppServer(t: TestDatabase, env: Record<string, string> = {}, port?: number): Promise<AppServer> {
  return startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, JOB_RUNNER: "false", ...env }, port);
}

/** Starts the server expecting it to refuse to start: resolves with its exit code and output (or fails if it serves). */
export async function startExpectingExit(env: Env, timeoutMs = 45_000): Promise<{ code: number | null; output: string }> {
  const { child, output } = launch(env, await freePort());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`The server was still running after ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output: output() });
    });
  });
}

/** A session cookie for a user, made by the app's own sign-in in the test process (same secret as the server). */
export async function sessionCookie(userId: number): Promise<string> {
  const response = await signIn(
    new Request("http://127.0.0.1/login"),
    { ip: "127.0.0.1", userAgent: "integration test" },
    userId,
    "/",
    "test",
  );
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith("koala_session="));
  if (!cookie) throw new Error("no session cookie");
  return cookie.split(";")[0]!;
}

/** A page's text as a person reads it: React's comment markers gone, quotes and ampersands unescaped. */
export const pageText = async (res: Response) =>
  (await res.text())
    .replace(/<!-- -->/g, "")
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
