import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SMTPServer } from "smtp-server";
import { E2E_PORT } from "../../playwright.config";

export const E2E_DIR = path.resolve("tests/.tmp/e2e");
export const MAIL_DIR = path.join(E2E_DIR, "mail");

/**
 * Starts what the e2e tests talk to: a real SMTP server on loopback (it writes each message to
 * MAIL_DIR) and the built app on a fresh SQLite database, seeded with the e2e users.
 */
export default async function globalSetup() {
  if (!existsSync("build/server/index.js")) throw new Error("Build the app first: npm run build");
  rmSync(E2E_DIR, { recursive: true, force: true });
  mkdirSync(MAIL_DIR, { recursive: true });

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
        writeFileSync(path.join(MAIL_DIR, `${Date.now()}-${n}.json`), JSON.stringify({ to, raw: Buffer.concat(chunks).toString("utf8") }));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const smtpPort = (smtp.server.address() as { port: number }).port;

  const env = {
    ...process.env,
    NODE_ENV: "production" as const,
    KOALA_ENV: "development",
    DATA_DIR: path.join(E2E_DIR, "data"),
    PORT: String(E2E_PORT),
    HOST: "127.0.0.1",
    APP_URL: `http://127.0.0.1:${E2E_PORT}`,
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    DEMO_SEED: "off",
    RATE_LIMIT_PER_IP: "100000",
    LOG_LEVEL: "warn",
  };
  const seed = spawnSync(path.resolve("node_modules/.bin/tsx"), ["tests/e2e/seed.ts"], { env, stdio: "inherit" });
  if (seed.status !== 0) throw new Error("Seeding the e2e database failed");

  const server: ChildProcess = spawn(process.execPath, ["server.mjs"], { env, stdio: ["ignore", "inherit", "inherit"] });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${E2E_PORT}/healthz`);
      if (res.ok) break;
    } catch {
      /* not up yet */
    }
    if (server.exitCode !== null) throw new Error(`The app exited with code ${server.exitCode}`);
    if (Date.now() > deadline) throw new Error("The app did not start within 60 s");
    await new Promise((r) => setTimeout(r, 200));
  }

  return async () => {
    if (server.exitCode === null) {
      const exited = new Promise((r) => server.once("exit", r));
      server.kill("SIGTERM");
      await exited;
    }
    await new Promise<void>((r) => smtp.close(() => r()));
  };
}
