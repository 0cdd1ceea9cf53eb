import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { run } from "./proc";

/**
 * The bench datasets: one project of N images (metadata, keywords, attribute values) owned by a bench user,
 * with its rows pointing at a few real stored image files. Built once by workers/make-dataset.ts, from a seed,
 * and cached under bench/.cache/datasets/<name>; a change to the generator bumps GENERATOR_VERSION, which
 * rebuilds them.
 */
export type DatasetName = "sqlite-100k" | "sqlite-1m" | "pg-100k" | "pg-1m" | "pg-10m" | "sqlite-100x5mb";
/**
 * `originalBytes`: every image gets an original of its own of about that size (a seeded noise PNG, which does not
 * compress), instead of the 8 small drawn files the rows share; for the ZIP download (P7).
 */
/** `databaseSuffix`: a PostgreSQL dataset's database is BENCH_PG_URL's with this after its name (each its own). */
export const DATASETS: Record<DatasetName, { count: number; postgres: boolean; originalBytes?: number; databaseSuffix?: string }> = {
  "sqlite-100k": { count: 100_000, postgres: false },
  "sqlite-1m": { count: 1_000_000, postgres: false },
  "pg-100k": { count: 100_000, postgres: true },
  "pg-1m": { count: 1_000_000, postgres: true, databaseSuffix: "_1m" },
  "pg-10m": { count: 10_000_000, postgres: true, databaseSuffix: "_10m" },
  "sqlite-100x5mb": { count: 100, postgres: false, originalBytes: 5_000_000 },
};
export const isDatasetName = (s: string): s is DatasetName => s in DATASETS;

export const GENERATOR_VERSION = 4;
/** The bench's own database; never the test suite's `test`. */
export const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/koala_bench";

export const BENCH_USER = {
  email: "bench@koala.example",
  password: "bench-password-not-secret",
  /** Fixed, so the harness can make TOTP codes for the password sign-in. */
  totpSecret: "KOALABENCHKOALABENCHKOALABENCH23",
};

export interface Dataset {
  name: DatasetName;
  count: number;
  dataDir: string;
  databaseUrl: string | null;
  projectId: number;
  projectName: string;
  email: string;
  password: string;
  totpSecret: string;
  /** The newest image: the grid's first card. Its thumbnail is a real file. */
  firstImage: { id: number; thumbKey: string };
  /** The oldest image: the grid's last card. */
  lastImage: { id: number; title: string };
  generatorVersion: number;
  builtAt: string;
  buildSeconds: number;
  /** Set by ensureDataset: built in this run, or reused from the cache. */
  builtThisRun?: boolean;
}

/** The environment the app (server, CLI, workers) needs to open a dataset. */
export function appEnv(ds: Pick<Dataset, "dataDir" | "databaseUrl">): Record<string, string> {
  return {
    DATA_DIR: ds.dataDir,
    ...(ds.databaseUrl ? { DATABASE_URL: ds.databaseUrl } : {}),
    KOALA_ENV: "development",
    DEMO_SEED: "off",
    LOG_LEVEL: "warn",
    // As the product's launchers set it (npm start, npm run serve, docs/deploy; decision 0029).
    MALLOC_ARENA_MAX: "2",
  };
}

const maintenanceUrl = () => {
  const url = new URL(PG_URL);
  url.pathname = "/postgres";
  return url.toString();
};
/** The address of a PostgreSQL dataset's own database. */
function datasetUrl(name: DatasetName): string {
  const base = decodeURIComponent(new URL(PG_URL).pathname.slice(1));
  if (!base || ["test", "postgres", "template0", "template1"].includes(base))
    throw new Error(`Refusing to use database "${base}" for the bench`);
  const url = new URL(PG_URL);
  url.pathname = `/${base}${DATASETS[name].databaseSuffix ?? ""}`;
  return url.toString();
}

/** Whether PostgreSQL answers at BENCH_PG_URL's server; the reason when it does not. */
export async function postgresProblem(): Promise<string | null> {
  const client = new pg.Client({ connectionString: maintenanceUrl(), connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("select 1");
    return null;
  } catch (error) {
    return `PostgreSQL is not reachable at ${maintenanceUrl()} (${(error as Error).message}); start it or set BENCH_PG_URL`;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A throwaway copy of a PostgreSQL dataset's database (CREATE DATABASE … TEMPLATE), for a metric that writes to it;
 * `drop()` removes it. The dataset's own database must have no open connection while it is copied.
 */
export async function copyPgDataset(ds: Dataset, suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (!ds.databaseUrl) throw new Error(`${ds.name} is not a PostgreSQL dataset`);
  return copyPgDatabase(ds.databaseUrl, suffix);
}

/** The same for any database of the bench's server: `<its name>_<suffix>`, made again if it was there. */
export async function copyPgDatabase(sourceUrl: string, suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const source = decodeURIComponent(new URL(sourceUrl).pathname.slice(1));
  const name = `${source}_${suffix}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: maintenanceUrl() });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`drop database if exists "${name}" with (force)`);
  await admin(`create database "${name}" template "${source}"`);
  const url = new URL(sourceUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists "${name}" with (force)`) };
}

async function recreateBenchDatabase(url: string) {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const client = new pg.Client({ connectionString: maintenanceUrl() });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name}" with (force)`);
    await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
}

async function stillComplete(ds: Dataset): Promise<boolean> {
  if (!ds.databaseUrl) return existsSync(path.join(ds.dataDir, "koala.sqlite"));
  const client = new pg.Client({ connectionString: ds.databaseUrl });
  try {
    await client.connect();
    const r = await client.query("select count(*)::int as n from images where project_id = $1", [ds.projectId]);
    return r.rows[0]?.n === ds.count;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The dataset from the cache, or built now (minutes for 1M images). */
export async function ensureDataset(root: string, cache: string, name: DatasetName, log: (line: string) => void): Promise<Dataset> {
  const spec = DATASETS[name];
  const dataDir = path.join(cache, "datasets", name);
  const manifest = path.join(dataDir, "dataset.json");
  if (existsSync(manifest)) {
    const ds = JSON.parse(readFileSync(manifest, "utf8")) as Dataset;
    // The cache may have moved with the checkout: the folder is where it is now, whatever the manifest says.
    if (ds.generatorVersion === GENERATOR_VERSION && (await stillComplete(ds))) return { ...ds, dataDir, builtThisRun: false };
    log(`  dataset ${name}: cached copy is outdated or incomplete, rebuilding`);
  }
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const databaseUrl = spec.postgres ? datasetUrl(name) : null;
  if (databaseUrl) await recreateBenchDatabase(databaseUrl);
  log(`  dataset ${name}: building ${spec.count.toLocaleString("en")} images (seeded; cached afterwards)`);
  const env = {
    ...process.env,
    ...appEnv({ dataDir, databaseUrl }),
    // The build's SQLite page cache holds the whole file: a million inserts at random keys into the four indexes of
    // near-duplicate quarters (migrations 026, 027) read their pages from disk again with the app's 64 MiB (42 minutes
    // for the 1M dataset). The bench's runs open the dataset with the app's own setting.
    SQLITE_CACHE_MB: "4096",
    BENCH_DATASET: JSON.stringify({
      name,
      count: spec.count,
      originalBytes: spec.originalBytes ?? null,
      generatorVersion: GENERATOR_VERSION,
      user: BENCH_USER,
    }),
  };
  await run(null, path.join(root, "node_modules/.bin/tsx"), [path.join(root, "bench/workers/make-dataset.ts")], {
    cwd: root,
    env,
    echo: (line) => log(`    ${line}`),
  });
  const ds = JSON.parse(readFileSync(manifest, "utf8")) as Dataset;
  return { ...ds, dataDir, builtThisRun: true };
}
