import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { connect, setConnection, type Connection } from "~/db/connection.server";
import { listenOn } from "~/db/listener.server";
import { metrics } from "~/lib/metrics.server";
import { PG_URL } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { freePort, pageText, startServer, type RunningServer } from "../helpers/server";
import { startSmtp } from "../helpers/smtp";

/**
 * Koala behind PgBouncer in transaction pooling mode, as docs/operations.md says to run it: DATABASE_URL to
 * PgBouncer, DATABASE_DIRECT_URL to PostgreSQL (migrations and the jobs' LISTEN session), PG_STATEMENT_TIMEOUT_MS=0.
 * A real PgBouncer (Debian's package, which `.ci/run` installs) on loopback, in front of a database of the test's
 * own: its `search_path` trick for schemas is a startup parameter PgBouncer does not pass on.
 */
const PGBOUNCER = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((p) => existsSync(p));
const SESSION_SECRET = "pgbouncer-test-secret-0123456789abcdef0123456";

describe.skipIf(!PG_URL)("behind PgBouncer in transaction pooling mode", () => {
  const database = `koala_pgb_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const dir = mkdtempSync(path.join(tmpdir(), "koala-pgbouncer-"));
  const mails: string[] = [];
  let bouncer: ChildProcess;
  let bouncerPort: number;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let app: RunningServer;
  let connection: Connection;
  const server = new URL(PG_URL ?? "postgres://127.0.0.1:5432/test");
  const direct = () => {
    const url = new URL(server);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const admin = async <T>(work: (c: pg.Client) => Promise<T>) => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    if (!PGBOUNCER) throw new Error("PgBouncer is not installed: apt-get install pgbouncer (.ci/run installs it)");
    await admin((c) => c.query(`create database ${database}`));
    bouncerPort = await freePort();
    // Readable by the user PgBouncer switches to when started as root (it refuses to run as root).
    chmodSync(dir, 0o777);
    const user = server.username || "postgres";
    writeFileSync(path.join(dir, "users.txt"), `"${user}" ""\n`);
    writeFileSync(
      path.join(dir, "pgbouncer.ini"),
      [
        "[databases]",
        `koala = host=${server.hostname} port=${server.port || 5432} dbname=${database}`,
        "[pgbouncer]",
        "listen_addr = 127.0.0.1",
        `listen_port = ${bouncerPort}`,
        "unix_socket_dir =",
        "auth_type = trust",
        `auth_file = ${path.join(dir, "users.txt")}`,
        "pool_mode = transaction",
        "default_pool_size = 4",
        "max_client_conn = 200",
        `admin_users = ${user}`,
        `logfile = ${path.join(dir, "pgbouncer.log")}`,
        `pidfile = ${path.join(dir, "pgbouncer.pid")}`,
      ].join("\n"),
    );
    const asRoot = process.getuid?.() === 0 ? ["-u", "postgres"] : [];
    bouncer = spawn(PGBOUNCER, [...asRoot, path.join(dir, "pgbouncer.ini")], { stdio: "ignore" });
    const answers = async () => {
      const c = new pg.Client({ host: "127.0.0.1", port: bouncerPort, user, database: "koala" });
      try {
        await c.connect();
        await c.query("select 1");
        return true;
      } catch {
        return false;
      } finally {
        await c.end().catch(() => {});
      }
    };
    for (const deadline = Date.now() + 15_000; !(await answers()); await new Promise((r) => setTimeout(r, 200)))
      if (Date.now() > deadline) throw new Error(`PgBouncer did not answer:\n${readFileSync(path.join(dir, "pgbouncer.log"), "utf8")}`);
    smtp = await startSmtp(mails);
    app = await startServer({
      DATA_DIR: dir,
      SESSION_SECRET,
      DATABASE_URL: `postgres://${user}@127.0.0.1:${bouncerPort}/koala`,
      DATABASE_DIRECT_URL: direct(),
      PG_STATEMENT_TIMEOUT_MS: "0",
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      LOG_LEVEL: "info",
    });
    // The test's fixtures go straight to PostgreSQL; the app reaches the same database only through PgBouncer.
    setConfig(
      loadConfig({ DATA_DIR: dir, KOALA_ENV: "development", DEMO_SEED: "off", LOG_LEVEL: "error", SESSION_SECRET, DATABASE_URL: direct() }),
    );
    connection = connect({ dialect: "postgres", url: direct() }, { poolSize: 2 });
    setConnection(connection);
  }, 90_000);

  afterAll(async () => {
    await app?.stop();
    await connection?.close();
    setConnection(undefined);
    bouncer?.kill("SIGTERM");
    await smtp?.close();
    await admin((c) => c.query(`drop database if exists ${database} with (force)`));
    rmSync(dir, { recursive: true, force: true });
  });

  it("migrates on the direct address, signs in by a mailed link, takes an upload and runs jobs, all through PgBouncer", async () => {
    expect(app.output()).toContain('"msg":"migrations applied"');
    expect((await fetch(`${app.base}/readyz`)).status).toBe(200);
    const editor = await makeUser();
    const project = await makeProject([{ actor: editor.actor }]);

    // The sign-in link: a token written in a transaction, a mail job claimed (SKIP LOCKED) and sent by the runner.
    const form = (fields: Record<string, string>) => ({
      method: "POST",
      redirect: "manual" as const,
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: app.base },
      body: new URLSearchParams(fields),
    });
    expect((await fetch(`${app.base}/login`, form({ intent: "magic-link", email: editor.user.email }))).status).toBe(200);
    await expect.poll(() => mails.filter((m) => m.includes(editor.user.email)).length, { timeout: 15_000 }).toBe(1);
    const raw = mails
      .find((m) => m.includes(editor.user.email))!
      .replace(/=\r?\n/g, "")
      .replace(/=3D/g, "=");
    const link = /\/auth\/([\w-]{20,})/.exec(raw)!;
    const used = await fetch(`${app.base}${link[0]}`, form({ token: link[1]! }));
    expect(used.status).toBe(302);
    const cookie = used.headers
      .getSetCookie()
      .find((c) => c.startsWith("koala_session="))!
      .split(";")[0]!;

    const upload = new FormData();
    upload.append("files", new Blob([new Uint8Array(await jpeg(320, 240, "#336699"))], { type: "image/jpeg" }), "bounced.jpg");
    const posted = await fetch(`${app.base}/upload/${project.id}/files`, {
      method: "POST",
      body: upload,
      headers: { Cookie: cookie },
      redirect: "manual",
    });
    expect(posted.status).toBe(302);
    const page = await fetch(`${app.base}/client/${project.id}`, { headers: { Cookie: cookie } });
    expect(await pageText(page)).toContain("bounced");

    // The app's queries went through PgBouncer: its clients are there, with the transactions they ran.
    const c = new pg.Client({ host: "127.0.0.1", port: bouncerPort, user: server.username || "postgres", database: "pgbouncer" });
    await c.connect();
    try {
      const clients = (await c.query("show clients")).rows as { database: string }[];
      expect(clients.filter((r) => r.database === "koala").length).toBeGreaterThan(0);
      const stats = (await c.query("show stats")).rows as { database: string; total_xact_count: string }[];
      expect(Number(stats.find((r) => r.database === "koala")?.total_xact_count)).toBeGreaterThan(10);
    } finally {
      await c.end();
    }
    expect(readFileSync(path.join(dir, "pgbouncer.log"), "utf8")).not.toMatch(/unsupported startup parameter/);
  }, 60_000);

  it("shows a LISTEN session behind the pooler as hearing nothing (its probe never arrives), and one on PostgreSQL itself as heard", async () => {
    const heard = async (channel: string) => (await metrics().listenHeard.get()).values.find((v) => v.labels.channel === channel)?.value;
    const user = server.username || "postgres";
    const bounced = listenOn({ host: "127.0.0.1", port: bouncerPort, user, database: "koala" }, "pgb_test_bounced", () => {});
    const straight = listenOn({ connectionString: direct() }, "pgb_test_direct", () => {});
    try {
      await expect.poll(() => heard("pgb_test_direct"), { timeout: 10_000, interval: 100 }).toBe(1);
      // The probe is sent as soon as each session has LISTENed: the direct one heard its own well within this.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await heard("pgb_test_bounced")).not.toBe(1);
    } finally {
      await Promise.all([bounced.close(), straight.close()]);
    }
  }, 30_000);
});
