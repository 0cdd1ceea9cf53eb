/**
 * The benchmark harness: `npm run bench` runs every metric, `npm run bench -- P1 P4` (or `P1*`) some of them.
 * Builds the production app, prepares the cached datasets, runs each metric against its baseline, writes
 * bench/results/<timestamp>.json and .md (and LATEST.md), and prints the comparison with earlier results.
 * See bench/README.md.
 */
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildApp } from "./lib/build";
import { ensureDataset, isDatasetName, type Dataset, type DatasetName } from "./lib/datasets";
import { machineInfo } from "./lib/machine";
import { provide } from "./lib/needs";
import { pinningCores, stopAll } from "./lib/proc";
import { comparison, markdown, writeResults, type MetricRecord, type RunRecord } from "./lib/results";
import { signIn } from "./lib/signin";
import type { Context, Metric, Need } from "./lib/types";
import { metrics } from "./metrics";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cache = path.join(root, "bench/.cache");
const resultsDir = path.join(root, "bench/results");
const log = (line: string) => process.stdout.write(`${line}\n`);

function parseArgs(argv: string[]) {
  const selectors: string[] = [];
  let rounds: number | null = null;
  let list = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--list" || a === "--help" || a === "-h") list = true;
    else if (a === "--rounds") rounds = Number(argv[++i]);
    else selectors.push(a);
  }
  if (rounds !== null && !(Number.isInteger(rounds) && rounds > 0)) throw new Error("--rounds needs a positive integer");
  return { selectors, rounds, list };
}

function select(selectors: string[]): Metric[] {
  if (!selectors.length) return metrics.filter((m) => !m.byNameOnly);
  const chosen = new Set<Metric>();
  for (const s of selectors) {
    const re = new RegExp(`^${s.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`, "i");
    // A glob never picks a metric that runs by name only; its exact id does.
    const found = metrics.filter((m) => re.test(m.id) && (!m.byNameOnly || m.id.toLowerCase() === s.toLowerCase()));
    if (!found.length) throw new Error(`No metric matches "${s}". Metrics: ${metrics.map((m) => m.id).join(", ")}`);
    found.forEach((m) => chosen.add(m));
  }
  return metrics.filter((m) => chosen.has(m));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.list) {
    log("Usage: npm run bench [-- <metric id or glob>...] [--rounds N]\n");
    for (const m of metrics) log(`  ${m.id.padEnd(7)} ${m.title}  (goal ${m.goal})`);
    return 0;
  }
  const chosen = select(args.selectors);
  const started = Date.now();
  const timestamp = new Date().toISOString();
  const cores = pinningCores();
  const machine = machineInfo(root, cores);
  log(
    `Koala bench: ${chosen.map((m) => m.id).join(", ")}  (${cores.server ? `server core ${cores.server}, load core ${cores.load}` : "no core pinning"})`,
  );

  // What the metrics need is provided first (lib/needs.ts); a metric whose tool, database or dataset cannot be had
  // fails with the reason, and the run with it.
  const provided = new Map<Need, Promise<string | null>>();
  const failed = new Map<Metric, string>();
  for (const m of chosen) {
    for (const need of m.needs) {
      if (!provided.has(need)) provided.set(need, provide(need, log));
      const reason = await provided.get(need)!;
      if (reason) {
        failed.set(m, reason);
        break;
      }
    }
  }
  const runnable = chosen.filter((m) => !failed.has(m));

  let appDir = path.join(cache, "app");
  let build: RunRecord["build"];
  if (runnable.some((m) => m.needs.includes("build"))) {
    log("Building the production app…");
    const t = Date.now();
    appDir = await buildApp(root, cache, log);
    build = { appSeconds: (Date.now() - t) / 1000 };
  }

  const datasets = new Map<DatasetName, Promise<Dataset>>();
  const dataset = (name: DatasetName) => {
    if (!datasets.has(name)) datasets.set(name, ensureDataset(root, cache, name, log));
    return datasets.get(name)!;
  };
  const needed = [...new Set(runnable.flatMap((m) => m.needs.filter(isDatasetName)))];
  if (needed.length) log(`Preparing datasets: ${needed.join(", ")}`);
  for (const name of needed) {
    const t = Date.now();
    const ds = await dataset(name).catch((error: Error) => {
      for (const m of runnable) if (m.needs.includes(name)) failed.set(m, `dataset ${name} could not be built: ${error.message}`);
      return null;
    });
    if (ds)
      log(
        `  ${name}: ${ds.builtThisRun ? `built in ${((Date.now() - t) / 1000).toFixed(1)} s` : `cached (built ${ds.builtAt}, in ${ds.buildSeconds} s)`}`,
      );
  }

  const cookies = new Map<string, Promise<string>>();
  const ctx: Context = {
    root,
    cache,
    cores,
    appDir,
    rounds: (n) => args.rounds ?? n,
    log,
    dataset,
    // Sessions live in the dataset's database and the cookie secret in its DATA_DIR, so one sign-in per dataset serves every server started on it.
    signIn: (baseUrl, ds) => {
      if (!cookies.has(ds.name)) cookies.set(ds.name, signIn(baseUrl, ds));
      return cookies.get(ds.name)!;
    },
  };

  const records: MetricRecord[] = [];
  for (const m of chosen) {
    const base = { id: m.id, title: m.title, goal: m.goal };
    const reason = failed.get(m);
    if (reason) {
      log(`\n${m.id}: error: ${reason}`);
      records.push({ ...base, status: "error", seconds: 0, reason });
      continue;
    }
    log(`\n${m.id}: ${m.title}`);
    const t = Date.now();
    try {
      const result = await m.run(ctx);
      const status = result.checks.every((c) => c.pass) ? "pass" : "miss";
      records.push({ ...base, ...result, status, seconds: Math.round((Date.now() - t) / 100) / 10 });
      log(
        `  ${status}: ${result.checks.map((c) => `${c.name} ${typeof c.value === "number" ? c.value.toFixed(3) : c.value} (goal ${c.goal})`).join(", ")}`,
      );
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      records.push({ ...base, status: "error", seconds: Math.round((Date.now() - t) / 100) / 10, reason: message });
      log(`  error: ${message}`);
    }
  }

  const run: RunRecord = {
    timestamp,
    durationSeconds: (Date.now() - started) / 1000,
    selection: chosen.map((m) => m.id),
    machine: { ...machine, loadAverageAtEnd: os.loadavg().map((l) => Math.round(l * 100) / 100) },
    build,
    datasets: Object.fromEntries(
      await Promise.all(
        [...datasets.entries()].map(async ([name, p]) => {
          const ds = await p.catch(() => null);
          return [
            name,
            ds ? { count: ds.count, builtThisRun: Boolean(ds.builtThisRun), buildSeconds: ds.buildSeconds, builtAt: ds.builtAt } : null,
          ];
        }),
      ).then((entries) => entries.filter(([, v]) => v !== null)),
    ),
    metrics: records,
  };
  const files = writeResults(resultsDir, run);
  log(`\n${markdown(run)}`);
  log(`Written: ${path.relative(root, files.json)}, ${path.relative(root, files.md)}, bench/results/LATEST.md`);
  log("\nCompared with earlier results (ratio, then the measured figure):");
  for (const line of comparison(resultsDir, files.json, run)) log(`  ${line}`);
  log(`\nTotal ${((Date.now() - started) / 1000).toFixed(0)} s.`);
  return records.some((r) => r.status === "error") ? 1 : 0;
}

process.on("SIGINT", () => void stopAll().then(() => process.exit(130)));
process.on("SIGTERM", () => void stopAll().then(() => process.exit(143)));
main()
  .then(async (code) => {
    await stopAll();
    process.exit(code);
  })
  .catch(async (error) => {
    await stopAll();
    process.stderr.write(`${error instanceof Error ? error.message : error}\n`);
    process.exit(1);
  });
