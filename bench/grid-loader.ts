/**
 * Grid loader timing on a 100k-image project (SQLite): the first page against a page 1000 pages deep.
 * Run: npx tsx bench/grid-loader.ts   (the dataset is built once under bench/.cache and reused)
 * A first step toward the bench/ harness of the benchmark issue; not part of npm test.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { loadConfig, setConfig } from "~/config.server";
import { openDatabase } from "~/services/boot.server";
import { seedLargeProject } from "~/services/demo.server";
import { cursorBefore, gridPage, gridTotal, gridVersion, type GridScope } from "~/models/grid.server";
import { SYSTEM } from "~/models/actor";
import { listProjects } from "~/models/projects.server";

const COUNT = 100_000;
const PAGE = 60;
const ROUNDS = 300;
const dataDir = path.resolve("bench/.cache/grid-100k");
const fresh = !existsSync(path.join(dataDir, "koala.sqlite"));
setConfig(loadConfig({ DATA_DIR: dataDir, KOALA_ENV: "development", DEMO_SEED: "off", LOG_LEVEL: "warn" }));
const connection = await openDatabase();
if (fresh) await seedLargeProject({ count: COUNT, name: "Bench 100k", log: (l) => process.stdout.write(`${l}\n`) });
const project = (await listProjects(SYSTEM)).find((p) => p.name === "Bench 100k")!;
const scope: GridScope = { kind: "project", projectId: project.id };
const deep = await cursorBefore(SYSTEM, scope, 1000 * PAGE);

async function time(label: string, work: () => Promise<unknown>) {
  for (let i = 0; i < 20; i++) await work(); // warm up
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    await work();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const q = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))]!.toFixed(3);
  process.stdout.write(`${label.padEnd(42)} p50 ${q(0.5)} ms   p99 ${q(0.99)} ms\n`);
}

process.stdout.write(`project of ${await gridTotal(SYSTEM, scope)} images, page of ${PAGE} cards, ${ROUNDS} rounds\n`);
await time("page 1 (keyset)", () => gridPage(SYSTEM, scope, { limit: PAGE }));
await time("page 1001 (keyset, 60,000 deep)", () => gridPage(SYSTEM, scope, { after: deep, limit: PAGE }));
await time("total count", () => gridTotal(SYSTEM, scope));
await time("version (ETag / freshness)", () => gridVersion(SYSTEM, scope));
await time("whole loader, page 1", () => Promise.all([gridPage(SYSTEM, scope, { limit: PAGE }), gridTotal(SYSTEM, scope), gridVersion(SYSTEM, scope)]));
await time("whole loader, page 1001", () => Promise.all([gridPage(SYSTEM, scope, { after: deep, limit: PAGE }), gridTotal(SYSTEM, scope), gridVersion(SYSTEM, scope)]));
await time("jump cursor to the last image (virtual grid)", () => cursorBefore(SYSTEM, scope, COUNT - 1));
await connection.close();
