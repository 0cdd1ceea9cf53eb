import { remember } from "~/lib/bounded-cache";
import { log } from "~/lib/log.server";
import { mkdirSync } from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, type DatabaseConnection } from "kysely";
import pg from "pg";
import { PG_POOL_DEFAULTS, SQLITE_CACHE_MB, type DatabaseConfig } from "~/config.server";
import { listenOn, type Listener } from "./listener.server";
import type { Database } from "./schema";

export type Dialect = "sqlite" | "postgres";
export type DB = Kysely<Database>;

/** SQLite writers take the write lock at BEGIN, so two writers never deadlock upgrading a read lock. */
class ImmediateSqliteDialect extends SqliteDialect {
  createDriver() {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw("begin immediate"));
    };
    return driver;
  }
}

/**
 * better-sqlite3 behind a statement cache: Kysely prepares every query it runs, and preparing costs more than running
 * most of ours (bench P3: the largest single item of a shared page's cost). Statements are keyed by their SQL, which
 * Kysely writes with placeholders, so the set is small; a statement still being iterated is never handed out twice.
 */
function withStatementCache(database: SQLite.Database, max = 500) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string) {
      const cached = statements.get(sql);
      if (cached && !cached.busy) return cached;
      const statement = database.prepare(sql);
      if (!cached) remember(statements, sql, statement, max);
      return statement;
    },
  };
}

/**
 * The app's settings of a SQLite connection, for the app and for the bench's bare statements alike. The page cache:
 * SQLite's own default is 2 MiB, so on a library of 100k images (a 150 MB file) a search that looks up its matched
 * images one by one read most pages from the operating system again, each time (13,000 look-ups: 33 ms with 2 MiB,
 * 7 ms with 128 MiB). The cache fills only as pages are read. 64 MiB by default: 256 kept a smart search's page of
 * 13,000 images at 19–30 ms (64: 26 ms, 2: 49 ms) but let a 1M-row import grow the process by 250 MB (decision 0012).
 */
export function sqliteSettings(database: SQLite.Database, cacheMb = SQLITE_CACHE_MB, opts: { readonly?: boolean } = {}) {
  if (!opts.readonly) {
    database.pragma("journal_mode = WAL");
    database.pragma("synchronous = NORMAL");
  }
  database.pragma("busy_timeout = 5000");
  database.pragma("foreign_keys = ON");
  database.pragma(`cache_size = -${Math.round(cacheMb * 1024)}`);
}

// int8 (counts, sums) as numbers: every value we store fits in 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export interface Connection {
  db: DB;
  dialect: Dialect;
  close(): Promise<void>;
  /** PostgreSQL: the pool's connections open, idle, and the queries waiting for one (/metrics); SQLite has no pool. */
  poolStats?: () => { total: number; idle: number; waiting: number };
  /**
   * PostgreSQL: LISTENs on `channel` on a session of its own, outside the pool (listener.server.ts: `onNotice` gets a
   * notification's payload, or null once the session is up); `close()` ends the ones still open. SQLite has no
   * notifications (its runners poll).
   */
  listen?: (channel: string, onNotice: (payload: string | null) => void) => Listener;
  /** PostgreSQL: a client checked out of the pool, for what Kysely cannot send (COPY, pg-copy.server.ts); release it. */
  client?: () => Promise<pg.PoolClient>;
}

/**
 * `direct`: the database's own address when `cfg` goes through a pooler in transaction mode (DATABASE_DIRECT_URL),
 * for the sessions that must stay one session: a LISTEN through such a pooler is lost with its transaction.
 */
export function connect(
  cfg: DatabaseConfig,
  opts: { pgSchema?: string; poolSize?: number; direct?: DatabaseConfig | null } = {},
): Connection {
  if (cfg.dialect === "sqlite") {
    mkdirSync(path.dirname(cfg.file), { recursive: true });
    const database = new SQLite(cfg.file);
    sqliteSettings(database, cfg.cacheMb);
    const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }) });
    return { db, dialect: "sqlite", close: () => db.destroy() };
  }
  const pool = new pg.Pool({
    ...pgPoolConfig(cfg, opts.poolSize),
    ...(opts.pgSchema ? { options: `-c search_path=${opts.pgSchema}` } : {}),
  });
  // A connection the server or the network ended (a restart, a failover, a cut line) emits 'error', which unheard
  // would end the process. An idle one is reported on the pool, which drops it (a new one is opened when needed).
  // One checked out between two statements has no listener of the pool's: its own keeps the process up, and the
  // statement it was to run fails instead, after which the pool drops it as unusable.
  pool.on("error", (error) => log.warn("database connection lost while idle; a new one will be opened", { error: error.message }));
  pool.on("connect", (client) => client.on("error", () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  const listeners = new Set<Listener>();
  const listenAt = opts.direct?.dialect === "postgres" ? opts.direct : cfg;
  const listen = (channel: string, onNotice: (payload: string | null) => void): Listener => {
    const listener = listenOn(pgSessionConfig(listenAt), channel, onNotice);
    listeners.add(listener);
    return {
      close() {
        listeners.delete(listener);
        return listener.close();
      },
    };
  };
  const close = async () => {
    await Promise.all([...listeners].map((l) => l.close()));
    listeners.clear();
    await db.destroy();
  };
  return { db, dialect: "postgres", close, poolStats, listen, client: () => pool.connect() };
}

/**
 * A pg.Pool's options from the settings (PG_POOL_MAX, PG_STATEMENT_TIMEOUT_MS, PG_IDLE_TIMEOUT_MS,
 * PG_CONNECT_TIMEOUT_MS), for every pool Koala opens (the app, the CLI, the bench); `max` overrides the pool's size.
 * The statement timeout is sent as a startup parameter (the session's default): a statement running longer is
 * cancelled by the server (code 57014), and its connection goes back to the pool usable.
 */
export function pgPoolConfig(cfg: Extract<DatabaseConfig, { dialect: "postgres" }>, max?: number): pg.PoolConfig {
  const settings = cfg.pool ?? PG_POOL_DEFAULTS;
  return {
    connectionString: cfg.url,
    max: max ?? settings.max,
    // A URL's own application_name wins over this one.
    application_name: settings.applicationName,
    ...(settings.statementTimeoutMs > 0 ? { statement_timeout: settings.statementTimeoutMs } : {}),
    idleTimeoutMillis: settings.idleTimeoutMs,
    connectionTimeoutMillis: settings.connectTimeoutMs,
  };
}

/**
 * A session of its own (a LISTEN): the pool's address, name and connect timeout, no statement timeout (it runs no
 * statements), and TCP keepalive, so that a peer gone without a word (a failover, a cut network) is noticed.
 */
function pgSessionConfig(cfg: Extract<DatabaseConfig, { dialect: "postgres" }>): pg.ClientConfig {
  const { connectionString, application_name, connectionTimeoutMillis } = pgPoolConfig(cfg);
  return { connectionString, application_name, connectionTimeoutMillis, keepAlive: true, keepAliveInitialDelayMillis: 30_000 };
}

// Kept on globalThis so that the dev server's module reloads keep using the one open connection.
const holder = globalThis as { __koalaConnection?: Connection };

/** The process-wide connection, opened by boot (or by a test with setConnection). */
export function conn(): Connection {
  const current = holder.__koalaConnection;
  if (!current) throw new Error("Database not opened: call openDatabase() first");
  return current;
}
export const db = (): DB => conn().db;
export const dialect = (): Dialect => conn().dialect;

export function setConnection(next: Connection | undefined) {
  holder.__koalaConnection = next;
}
