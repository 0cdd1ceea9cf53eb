import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { loadConfig, setConfig } from "~/config.server";
import { connect, setConnection, type Connection, type Dialect } from "~/db/connection.server";
import { migrateToLatest } from "~/db/migrations.server";
import { setStorage } from "~/services/storage.server";
import { retryOnVanishedSchema } from "./pg-race";

/**
 * The integration suite runs every test once per dialect: a fresh SQLite file, and (when
 * TEST_DATABASE_URL is set) a fresh schema in the real PostgreSQL.
 */
export const PG_URL = process.env.TEST_DATABASE_URL;
export const dialects: Dialect[] = PG_URL ? ["sqlite", "postgres"] : ["sqlite"];

export interface TestDatabase {
  connection: Connection;
  dataDir: string;
  /** What a server process needs as DATABASE_URL to open this same database. */
  url: string;
  drop(): Promise<void>;
}

/** A migrated, empty database of the dialect, installed as the process-wide connection, with its own DATA_DIR. */
export async function freshDatabase(dialect: Dialect, env: Record<string, string> = {}): Promise<TestDatabase> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "koala-test-"));
  // OCR reads only where a test asks for it (OCR: "on"): elsewhere it would only slow the jobs a test drains.
  setConfig(loadConfig({ DATA_DIR: dataDir, KOALA_ENV: "development", DEMO_SEED: "off", LOG_LEVEL: "error", OCR: "off", ...env }));
  setStorage(undefined);
  let connection: Connection;
  let dropSchema = async () => {};
  let schema: string | undefined;
  if (dialect === "sqlite") {
    connection = connect({ dialect: "sqlite", file: path.join(dataDir, "test.sqlite") });
  } else {
    schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    connection = connect({ dialect: "postgres", url: PG_URL! }, { pgSchema: schema, poolSize: 8 });
    dropSchema = async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    };
  }
  await retryOnVanishedSchema(() => migrateToLatest(connection.db, dialect, schema));
  setConnection(connection);
  const url =
    dialect === "sqlite"
      ? `sqlite:${path.join(dataDir, "test.sqlite")}`
      : `${PG_URL}${PG_URL!.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    connection,
    dataDir,
    url,
    async drop() {
      await connection.close();
      setConnection(undefined);
      await dropSchema();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { sql };
