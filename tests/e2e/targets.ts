import path from "node:path";
import type { DatabaseConfig } from "~/config.server";

/**
 * The servers the e2e run talks to. Always the built app on a fresh SQLite database (port E2E_PORT); when
 * TEST_DATABASE_URL is set, a second one on a fresh PostgreSQL schema of that database (port E2E_PORT + 1),
 * against which the browser projects js-pg and nojs-pg run the tests tagged @core.
 * Plain data, no Playwright: global-setup, the seed script, the config and the fixtures all read it.
 */
export const E2E_PORT = Number(process.env.E2E_PORT ?? 3210);
export const E2E_DIR = path.resolve("tests/.tmp/e2e");
export const MAIL_DIR = path.join(E2E_DIR, "mail");
/** Given to the servers explicitly, so the sign-in fixture signs its session cookies with the same secret. */
export const E2E_SESSION_SECRET = "e2e-only-session-secret-0123456789abcdef";
export const PG_URL = process.env.TEST_DATABASE_URL || undefined;

export type TargetName = "sqlite" | "postgres";

export interface Target {
  name: TargetName;
  port: number;
  baseURL: string;
  dataDir: string;
  /** The server's DATABASE_URL. */
  databaseUrl: string;
  /** The same database, as the app's connect() takes it. */
  database: DatabaseConfig;
  /** The Playwright projects that run against this server; each has its own users (see users.ts). */
  browserProjects: readonly [string, string];
  /** PostgreSQL only: the schema the server's search_path points at, made afresh by global-setup. */
  schema?: string;
}

export function targetFor(name: TargetName): Target {
  if (name === "sqlite") {
    const dataDir = path.join(E2E_DIR, "data");
    const file = path.join(dataDir, "koala.sqlite");
    return {
      name,
      port: E2E_PORT,
      baseURL: `http://127.0.0.1:${E2E_PORT}`,
      dataDir,
      databaseUrl: `sqlite:${file}`,
      database: { dialect: "sqlite", file },
      browserProjects: ["js", "nojs"],
    };
  }
  if (!PG_URL) throw new Error("The PostgreSQL e2e target needs TEST_DATABASE_URL");
  // One schema per port: two runs at once need two ports anyway, and a run that died leaves nothing the next does not drop.
  const schema = `e2e_${E2E_PORT}`;
  const url = `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    name,
    port: E2E_PORT + 1,
    baseURL: `http://127.0.0.1:${E2E_PORT + 1}`,
    dataDir: path.join(E2E_DIR, "data-pg"),
    databaseUrl: url,
    database: { dialect: "postgres", url },
    browserProjects: ["js-pg", "nojs-pg"],
    schema,
  };
}

export const targetNames: TargetName[] = PG_URL ? ["sqlite", "postgres"] : ["sqlite"];
