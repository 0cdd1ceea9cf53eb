import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../helpers/db";
import { startAppServer, type AppServer } from "../helpers/server";

/**
 * What the process does when its surroundings fail (issue 24, item 19): the pipe its log goes to closes (the log
 * shipper reading `node build/server.js | shipper` went away), or an exception escapes every handler.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds (user + system) the process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime (fields 14 and 15) in clock ticks
}
const exitOf = (app: AppServer) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (app.child.exitCode !== null || app.child.signalCode !== null)
      return resolve({ code: app.child.exitCode, signal: app.child.signalCode });
    app.child.once("exit", (code, signal) => resolve({ code, signal }));
  });

describe("the server process when things around it fail", () => {
  let t: TestDatabase;
  let app: AppServer | undefined;
  afterEach(async () => {
    if (app && app.child.exitCode === null && app.child.signalCode === null) app.child.kill("SIGKILL");
    app = undefined;
    await t?.drop();
  });

  it("treats a closed log pipe as the end of logging: it goes on serving, stays idle, and stops on SIGTERM", async () => {
    t = await freshDatabase("sqlite");
    app = await startAppServer(t, { LOG_LEVEL: "info" });
    // The reader of both log pipes goes away.
    app.child.stdout!.destroy();
    app.child.stderr!.destroy();
    // Requests that log (a refused method logs a warning; every start of a page may log), after the pipes closed.
    for (let i = 0; i < 5; i++) {
      expect((await fetch(`${app.base}/login`, { method: "DELETE" })).status).toBe(405);
      expect((await fetch(`${app.base}/login`)).status).toBe(200);
    }
    const pid = app.child.pid!;
    const before = cpuSeconds(pid);
    await sleep(3000);
    const used = cpuSeconds(pid) - before;
    // Idle, a server uses next to nothing; the old loop (each failed log write logged again) used a core.
    expect(used).toBeLessThan(0.5);
    expect((await fetch(`${app.base}/healthz`)).status).toBe(200);
    const exited = exitOf(app);
    app.child.kill("SIGTERM");
    const result = await Promise.race([exited, sleep(15_000).then(() => "still running")]);
    expect(result).toEqual({ code: 0, signal: null });
  }, 60_000);

  it("logs an uncaught exception once and exits non-zero, so that its supervisor starts a clean process", async () => {
    t = await freshDatabase("sqlite");
    const preload = path.resolve("tests/helpers/throw-on-signal.mjs");
    app = await startAppServer(t, { NODE_OPTIONS: `--import=${preload}` });
    expect((await fetch(`${app.base}/healthz`)).status).toBe(200);
    const exited = exitOf(app);
    app.child.kill("SIGUSR2");
    const result = await Promise.race([exited, sleep(15_000).then(() => "still running")]);
    expect(result).toEqual({ code: 1, signal: null });
    const lines = app
      .stderr()
      .split("\n")
      .filter((l) => l.includes("uncaught exception"));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { level: string; msg: string; error: string };
    expect(line).toMatchObject({ level: "error", msg: "uncaught exception: exiting", error: "thrown by the test's SIGUSR2" });
  }, 60_000);
});
