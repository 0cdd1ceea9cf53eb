import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { nginxPath } from "../../tests/helpers/nginx";
import { CHROMIUM } from "../metrics/p8b-scroll";
import { DATASETS, isDatasetName, postgresProblem } from "./datasets";
import { hasCommand } from "./proc";
import type { Need } from "./types";

/**
 * What a metric needs from the machine, provided before the run: a missing nginx or Chromium is installed from
 * Debian's packages (as .ci/run installs them for the tests), a stopped local PostgreSQL is started. A need that
 * still cannot be met fails its metrics, loudly: a full run never leaves a metric out.
 */

const nginxFound = () => Boolean(nginxPath()) || hasCommand("nginx");
const last = (text: string) => text.trim().split("\n").pop() ?? "";

let aptUpdated = false;
/** Debian packages installed with apt-get: only as root, where apt-get exists. Answers why not, or null. */
function aptInstall(packages: string[], log: (line: string) => void): string | null {
  if (!hasCommand("apt-get")) return "apt-get is not on this machine";
  if (process.getuid?.() !== 0) return "installing needs root (run the bench as root, or install it first)";
  log(`Installing ${packages.join(", ")} (Debian packages)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const steps = [...(aptUpdated ? [] : [["update", "-qq"]]), ["install", "-y", "-qq", ...packages]];
  for (const args of steps) {
    const r = spawnSync("apt-get", args, { stdio: ["ignore", "ignore", "pipe"], env });
    if (r.status !== 0) return `apt-get ${args[0]} failed: ${last(r.stderr.toString())}`;
    if (args[0] === "update") aptUpdated = true;
  }
  return null;
}

/** A local PostgreSQL cluster started as .ci/run starts it (Debian's pg_ctlcluster); answers what went wrong, or null. */
function startPostgres(log: (line: string) => void): string | null {
  if (!hasCommand("pg_ctlcluster") || !existsSync("/etc/postgresql")) return "no local cluster to start (pg_ctlcluster)";
  const version = readdirSync("/etc/postgresql").sort()[0];
  if (!version) return "no local cluster to start (/etc/postgresql is empty)";
  log(`Starting PostgreSQL ${version}…`);
  const r = spawnSync("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"], { stdio: ["ignore", "ignore", "pipe"] });
  return r.status === 0 ? null : `pg_ctlcluster failed: ${last(r.stderr.toString())}`;
}

let postgres: Promise<string | null> | null = null;
/** PostgreSQL reachable, started once if it was not (every PostgreSQL dataset waits on the same attempt). */
function providePostgres(log: (line: string) => void): Promise<string | null> {
  return (postgres ??= (async () => {
    if (!(await postgresProblem())) return null;
    const started = process.env.BENCH_PG_URL ? "BENCH_PG_URL names another server" : startPostgres(log);
    for (let i = 0; i < 30; i++) {
      const problem = await postgresProblem();
      if (!problem) return null;
      if (i === 29) return started ? `${problem} (${started})` : problem;
      await new Promise((r) => setTimeout(r, 1000));
    }
    return null;
  })());
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
  if (isDatasetName(need) && DATASETS[need].postgres) return providePostgres(log);
  return null;
}
