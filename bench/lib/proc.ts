import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import net from "node:net";
import os from "node:os";

/**
 * Child processes of the harness: optionally pinned to a core with taskset (taskset execs the command,
 * so the pid is the command's own), remembered so that every one of them is stopped by pid at exit.
 */
const running = new Set<ChildProcess>();

export function hasCommand(name: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;
}

/** Server on core 0, load generator on core 1, when there are two cores and taskset (BENCH_PIN=off: no pinning). */
export function pinningCores(): { server: string | null; load: string | null } {
  if (process.env.BENCH_PIN === "off" || os.cpus().length < 2 || !hasCommand("taskset")) return { server: null, load: null };
  return { server: "0", load: "1" };
}

export interface Started {
  child: ChildProcess;
  pid: number;
  /** The last 20 KB of stdout and stderr, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

export function start(core: string | null, command: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Started {
  const [cmd, argv] = core ? ["taskset", ["-c", core, command, ...args]] : [command, args];
  const child = spawn(cmd, argv, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let out = "";
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString("utf8")).slice(-20_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", () => running.delete(child));
  return {
    child,
    pid: child.pid ?? -1,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs a command to completion and returns its output; rejects on a non-zero exit. */
export async function run(
  core: string | null,
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; echo?: (line: string) => void } = {},
): Promise<string> {
  const started = start(core, command, args, opts);
  let stdout = "";
  let partial = "";
  started.child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    if (!opts.echo) return;
    partial += chunk.toString("utf8");
    const lines = partial.split("\n");
    partial = lines.pop()!;
    for (const line of lines) opts.echo(line);
  });
  const code = await new Promise<number | null>((resolve) => started.child.once("exit", (c) => resolve(c)));
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${code}:\n${started.output().slice(-4000)}`);
  return stdout;
}

/** Stops every child still running (by pid). */
export async function stopAll() {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
          setTimeout(() => {
            child.kill("SIGKILL");
            resolve();
          }, 5000).unref();
        }),
    ),
  );
}

/** Refuses a port someone else is listening on (we never kill what we did not start). */
export async function assertPortFree(port: number) {
  const inUse = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
  if (inUse) throw new Error(`Port ${port} is in use; stop whatever listens there or free it before running the bench.`);
}

/** Polls a URL until it answers 2xx, failing early when the process behind it exits. */
export async function waitForHttp(url: string, proc: Started, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`The process exited before ${url} answered:\n${proc.output().slice(-4000)}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s:\n${proc.output().slice(-4000)}`);
}
