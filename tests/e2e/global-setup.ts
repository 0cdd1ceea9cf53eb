import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { SMTPServer } from "smtp-server";
import { startOidcProvider } from "../../scripts/oidc-provider.mjs";
import { VANISHED_SCHEMA } from "../helpers/pg-race";
import { SSO_CLIENT_ID, SSO_CLIENT_SECRET, SSO_DOMAIN, SSO_ID, SSO_NAME, SSO_PASSWORD, SSO_PEOPLE, ssoLogin, ssoNewGroup } from "./sso";
import { E2E_DIR, E2E_SESSION_SECRET, MAIL_DIR, PG_URL, targetFor, targetNames, type Target } from "./targets";

/**
 * Starts what the e2e tests talk to: a real SMTP server on loopback (it writes each message to MAIL_DIR) and
 * the built app on a fresh SQLite database, seeded with the e2e users; with TEST_DATABASE_URL, a second app
 * on a fresh PostgreSQL schema, seeded the same way, for the @core tests of the js-pg and nojs-pg projects.
 */
export default async function globalSetup() {
  if (!existsSync("build/server/index.js")) throw new Error("Build the app first: npm run build");
  rmSync(E2E_DIR, { recursive: true, force: true });
  mkdirSync(MAIL_DIR, { recursive: true });
  if (!PG_URL)
    process.stdout.write(
      "NOTE: TEST_DATABASE_URL is not set: the e2e tests run on SQLite only (the js-pg and nojs-pg projects are not defined).\n",
    );

  let n = 0;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        n += 1;
        // Written whole, then renamed: a test polling the folder never reads half a message (a name without the
        // leading time is never read).
        const part = path.join(MAIL_DIR, `part-${process.pid}-${n}.json`);
        writeFileSync(part, JSON.stringify({ to, raw: Buffer.concat(chunks).toString("utf8") }));
        renameSync(part, path.join(MAIL_DIR, `${Date.now()}-${n}.json`));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const smtpPort = (smtp.server.address() as { port: number }).port;

  const targets = targetNames.map(targetFor);
  // The company's OpenID Provider (tests/e2e/sso.ts): its people per browser project, Koala's servers as its clients.
  const people = new Map(
    targets.flatMap((target) =>
      target.browserProjects.flatMap((project) =>
        Object.entries(SSO_PEOPLE).map(([person, groups]) => {
          const login = ssoLogin(person as keyof typeof SSO_PEOPLE, project);
          const given = person === "mapped" ? [ssoNewGroup(project)] : [...groups];
          return [login, { password: SSO_PASSWORD, email: `${login}@${SSO_DOMAIN}`, givenName: "Sso", familyName: login, groups: given }];
        }),
      ),
    ),
  );
  const op = (await startOidcProvider({
    people,
    title: SSO_NAME,
    controls: true,
    clients: targets.map((target) => ({
      client_id: `${SSO_CLIENT_ID}-${target.name}`,
      client_secret: SSO_CLIENT_SECRET,
      redirect_uris: [`${target.baseURL}/auth/sso/${SSO_ID}/callback`],
      post_logout_redirect_uris: [`${target.baseURL}/login`],
      backchannel_logout_uri: `${target.baseURL}/auth/sso/${SSO_ID}/backchannel-logout`,
    })),
  })) as { issuer: string; close(): Promise<void> };
  process.env.E2E_SSO_ISSUER = op.issuer;
  const envFor = (target: Target) => ({
    ...process.env,
    NODE_ENV: "production" as const,
    KOALA_ENV: "development",
    DATA_DIR: target.dataDir,
    DATABASE_URL: target.databaseUrl,
    E2E_TARGET: target.name,
    SESSION_SECRET: E2E_SESSION_SECRET,
    PORT: String(target.port),
    HOST: "127.0.0.1",
    APP_URL: target.baseURL,
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    DEMO_SEED: "off",
    RATE_LIMIT_PER_IP: "100000",
    REGISTRATIONS_PER_IP: "100000",
    LOG_LEVEL: "warn",
    OIDC_PROVIDERS: SSO_ID,
    OIDC_E2E_NAME: SSO_NAME,
    OIDC_E2E_ISSUER: op.issuer,
    OIDC_E2E_CLIENT_ID: `${SSO_CLIENT_ID}-${target.name}`,
    OIDC_E2E_CLIENT_SECRET: SSO_CLIENT_SECRET,
    OIDC_E2E_DOMAINS: SSO_DOMAIN,
    OIDC_E2E_SSO_ONLY: "true",
  });

  const servers: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      servers.map(async (server) => {
        if (server.exitCode !== null || server.signalCode !== null) return;
        const exited = new Promise((r) => server.once("exit", r));
        server.kill("SIGTERM");
        await exited;
      }),
    );
    await new Promise<void>((r) => smtp.close(() => r()));
    await op.close();
    for (const target of targets) if (target.schema) await pgQuery(`drop schema if exists ${target.schema} cascade`);
  };

  try {
    for (const target of targets)
      if (target.schema) {
        await pgQuery(`drop schema if exists ${target.schema} cascade`);
        await pgQuery(`create schema ${target.schema}`);
      }
    // Both databases are seeded at once (tsx processes), then both servers start at once. The seed's pictures are
    // plain colours: their readings would only hold up the runner the OCR tests wait on (ocr.spec.ts).
    await Promise.all(targets.map((target) => seed({ ...envFor(target), OCR: "off" }, target)));
    await Promise.all(
      targets.map(async (target) => {
        // A boot that died of another run's schema vanishing under its migration starts again (helpers/pg-race.ts).
        for (let attempt = 1; ; attempt++) {
          const server = spawn(process.execPath, ["build/server.js"], { env: envFor(target), stdio: ["ignore", "inherit", "pipe"] });
          let errors = "";
          server.stderr!.on("data", (c: Buffer) => {
            errors = (errors + c.toString()).slice(-20_000);
            process.stderr.write(c);
          });
          servers.push(server);
          try {
            return await waitUntilUp(server, target);
          } catch (error) {
            if (attempt >= 3 || !VANISHED_SCHEMA.test(errors)) throw error;
          }
        }
      }),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}

function seed(env: NodeJS.ProcessEnv, target: Target) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(path.resolve("node_modules/.bin/tsx"), ["tests/e2e/seed.ts"], { env, stdio: "inherit" });
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`Seeding the e2e database (${target.name}) failed`))));
  });
}

async function waitUntilUp(server: ChildProcess, target: Target) {
  // Generous: a loaded 2-core machine starts the built server in a few seconds, an idle one in well under one.
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      const res = await fetch(`${target.baseURL}/healthz`);
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    if (server.exitCode !== null) throw new Error(`The app (${target.name}) exited with code ${server.exitCode}`);
    if (Date.now() > deadline) throw new Error(`The app (${target.name}) did not start within 90 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function pgQuery(text: string) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
