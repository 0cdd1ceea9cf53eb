import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import pg from "pg";
import { loadConfig, PG_POOL_DEFAULTS, setConfig } from "~/config.server";
import { connect, setConnection, type Connection } from "~/db/connection.server";
import { migrationsFor } from "~/db/migrations.server";
import { openDatabase } from "~/services/boot.server";
import { PG_URL } from "../helpers/db";

/** The pool's settings on a real PostgreSQL: the statement timeout and PG_POOL_MAX. */
describe.skipIf(!PG_URL)("the PostgreSQL pool", () => {
  const applicationName = `koala-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  let connection: Connection;
  beforeAll(() => {
    const cfg = loadConfig({
      DATA_DIR: "/tmp/koala-pool",
      DATABASE_URL: PG_URL,
      PG_POOL_MAX: "3",
      PG_STATEMENT_TIMEOUT_MS: "300",
      PG_CONNECT_TIMEOUT_MS: "5000",
    });
    if (cfg.database.dialect !== "postgres") throw new Error("not PostgreSQL");
    expect(cfg.database.pool).toEqual({ ...PG_POOL_DEFAULTS, max: 3, statementTimeoutMs: 300, connectTimeoutMs: 5000 });
    connection = connect({ ...cfg.database, pool: { ...cfg.database.pool!, applicationName } });
  });
  afterAll(() => connection?.close());

  it("cancels a statement that runs longer than PG_STATEMENT_TIMEOUT_MS, and the pool stays usable", async () => {
    const started = Date.now();
    const error = await sql`select pg_sleep(5)`.execute(connection.db).then(
      () => null,
      (err: unknown) => err as { code?: string; message: string },
    );
    expect(error).toMatchObject({ code: "57014", message: "canceling statement due to statement timeout" });
    expect(Date.now() - started).toBeLessThan(3000);
    // Every connection of the pool, each cancelled once, still answers.
    const cancelled = await Promise.allSettled([1, 2, 3].map(() => sql`select pg_sleep(1)`.execute(connection.db)));
    expect(cancelled.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    const answers = await Promise.all([1, 2, 3, 4].map((n) => sql<{ n: number }>`select ${n}::int as n`.execute(connection.db)));
    expect(answers.map((a) => a.rows[0]!.n)).toEqual([1, 2, 3, 4]);
    // A transaction's statements too: the one over the limit fails the transaction, not the connection.
    await expect(
      connection.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await sql`select pg_sleep(1)`.execute(trx);
      }),
    ).rejects.toThrow(/statement timeout/);
    expect((await sql<{ ok: number }>`select 1 as ok`.execute(connection.db)).rows[0]!.ok).toBe(1);
  });

  it("survives its connections being ended by the server (a restart, a failover), idle or held between two statements: nothing uncaught, the next query opens a new one", async () => {
    await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(connection.db)));
    expect(connection.poolStats!().idle).toBe(3);
    const uncaught: unknown[] = [];
    const listener = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", listener);
    try {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      const ended = await admin.query(
        "select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()",
        [applicationName],
      );
      await admin.end();
      expect(ended.rows).toHaveLength(3);
      await expect.poll(() => connection.poolStats!().total, { timeout: 5_000 }).toBe(0);
      expect((await sql<{ ok: number }>`select 1 as ok`.execute(connection.db)).rows[0]!.ok).toBe(1);
      // One held between two statements (a transaction's, a migration's) when its backend is ended: the next
      // statement fails, the process stays up, and the pool opens a good connection afterwards.
      await expect(
        connection.db.connection().execute(async (held) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(held);
          const killer = new pg.Client({ connectionString: PG_URL });
          await killer.connect();
          await killer.query("select pg_terminate_backend($1)", [rows[0]!.pid]);
          await killer.end();
          await new Promise((r) => setTimeout(r, 200));
          await sql`select 1`.execute(held);
        }),
      ).rejects.toThrow();
      expect((await sql<{ ok: number }>`select 1 as ok`.execute(connection.db)).rows[0]!.ok).toBe(1);
    } finally {
      process.off("uncaughtException", listener);
    }
    expect(uncaught).toEqual([]);
  });

  it("opens no more than PG_POOL_MAX connections however many statements wait", async () => {
    const observer = new pg.Client({ connectionString: PG_URL });
    await observer.connect();
    try {
      const count = async () =>
        Number(
          (await observer.query<{ n: string }>("select count(*) as n from pg_stat_activity where application_name = $1", [applicationName]))
            .rows[0]!.n,
        );
      const busy = Promise.all(Array.from({ length: 8 }, () => sql`select pg_sleep(0.15)`.execute(connection.db)));
      let most = 0;
      let settled = false;
      void busy.finally(() => (settled = true));
      while (!settled) {
        most = Math.max(most, await count());
        await new Promise((r) => setTimeout(r, 20));
      }
      await busy;
      expect(most).toBe(3);
    } finally {
      await observer.end();
    }
  });

  it("migrates on DATABASE_DIRECT_URL's server when set (behind PgBouncer: the direct port), not through DATABASE_URL", async () => {
    const schema = `t_direct_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    try {
      setConfig(
        loadConfig({
          DATA_DIR: "/tmp/koala-pool",
          // Nothing listens here: the app's own pool is not asked for anything while the database migrates.
          DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere",
          DATABASE_DIRECT_URL: `${PG_URL}${PG_URL!.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
          PG_STATEMENT_TIMEOUT_MS: "1",
          KOALA_ENV: "development",
          LOG_LEVEL: "error",
        }),
      );
      // Migrations run with no statement timeout at all (1 ms would cancel every one of them).
      const opened = await openDatabase();
      setConnection(undefined);
      await opened.close();
      const { rows } = await admin.query<{ n: string }>(`select count(*) as n from ${schema}.kysely_migration`);
      expect(Number(rows[0]!.n)).toBe(Object.keys(migrationsFor("postgres")).length);
    } finally {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
  });
});
