import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { DATASETS, isDatasetName, postgresProblem } from "./datasets";
import { CHROMIUM } from "../metrics/p8b-scroll";
import { hasCommand } from "./proc";
import type { Need } from "./types";

/**
 * What a metric needs from the machine, provided before the run: a missing nginx or Chromium is installed from
 * Debian's packages (as .ci/run installs them for the tests), a stopped local PostgreSQL is started. A need that
 * still cannot be met fails its metrics, loudly: a full run never leaves a metric out.
 */

/** The harness starts nginx by name (lib/server.ts), so it must be on the PATH. */
const nginxFound = () => hasCommand("nginx");

/** Debian packages installed with apt-get: only as root, where apt-get exists. Answers why not, or null. */
function aptInstall(packages: string[], log: (line: string) => void): string | null {
  if (!hasCommand("apt-get")) return "apt-get is not on this machine";
  if (process.getuid?.() !== 0) return "installing needs root (run the bench as root, or install it first)";
  log(`Installing ${packages.join(", ")} (Debian packages)…`);
  for (const args of [
    ["update", "-qq"],
    ["install", "-y", "-qq", ...packages],
  ]) {
    const r = spawnSync("apt-get", args, {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (r.status !== 0) return `apt-get ${args[0]} failed: ${r.stderr.toString().trim().split("\n").pop()}`;
  }
  return null;
}

/** A local PostgreSQL cluster started as .ci/run starts it (Debian's pg_ctlcluster), when there is one. */
function startPostgres(log: (line: string) => void) {
  if (!hasCommand("pg_ctlcluster") || !existsSync("/etc/postgresql")) return;
  const version = readdirSync("/etc/postgresql").sort()[0];
  if (!version) return;
  log(`Starting PostgreSQL ${version}…`);
  spawnSync("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"], { stdio: "ignore" });
}

/** Provides `need` if it is missing; answers why it cannot be met (the metric then fails), or null. */
export async function provide(need: Need, log: (line: string) => void): Promise<string | null> {
  if (need === "nginx" && !nginxFound()) {
    const why = aptInstall(["nginx-light"], log);
    if (!nginxFound())
      return `nginx is not installed and could not be (${why ?? "not found after apt-get"}): apt-get install -y nginx-light`;
  }
  if (need === "chromium" && !existsSync(CHROMIUM)) {
    const why = process.env.CHROMIUM_PATH ? `CHROMIUM_PATH is ${CHROMIUM}` : aptInstall(["chromium", "fonts-dejavu-core"], log);
    if (!existsSync(CHROMIUM)) return `Chromium is not at ${CHROMIUM} and could not be installed (${why ?? "not found after apt-get"})`;
  }
  if (isDatasetName(need) && DATASETS[need].postgres) {
    if (!(await postgresProblem())) return null;
    if (!process.env.BENCH_PG_URL) startPostgres(log);
    for (let i = 0; i < 30; i++) {
      const problem = await postgresProblem();
      if (!problem || i === 29) return problem;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  return null;
}
