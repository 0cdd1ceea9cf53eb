import { spawnSync } from "node:child_process";
import os from "node:os";

const git = (root: string, args: string[]) => spawnSync("git", args, { cwd: root, encoding: "utf8" }).stdout?.trim() ?? "";

/** Where and on what the run happened, for the results file. */
export function machineInfo(root: string, cores: { server: string | null; load: string | null }) {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpus: { count: cpus.length, model: cpus[0]?.model ?? "unknown", mhz: cpus[0]?.speed ?? 0 },
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
    node: process.version,
    pinning: cores.server
      ? `server and baselines on core ${cores.server}, load generator on core ${cores.load}`
      : "none (fewer than 2 cores or no taskset)",
    git: {
      commit: git(root, ["rev-parse", "HEAD"]),
      branch: git(root, ["rev-parse", "--abbrev-ref", "HEAD"]),
      /** Uncommitted changes outside bench/ (the measured app may differ from the commit). */
      dirty: git(root, ["status", "--porcelain", "--", ".", ":!bench", ":!node_modules"]).split("\n").filter(Boolean),
    },
  };
}
