import { test as base, type BrowserContext } from "@playwright/test";
import { createCookie } from "@remix-run/node";
import { connect, setConnection, type DB } from "~/db/connection.server";
import { startSession } from "~/models/sessions.server";
import { E2E_SESSION_SECRET, targetFor, type Target, type TargetName } from "./targets";
import { emailFor, type Scenario } from "./users";

export { expect } from "@playwright/test";

/** Set per Playwright project in playwright.config.ts: which server (and so which database) the project runs against. */
export interface E2eOptions {
  target: TargetName;
}

interface WorkerFixtures extends E2eOptions {
  /** The target server's database, opened with the app's own connection code (SQLite file or PostgreSQL schema). */
  db: DB;
  server: Target;
}

interface TestFixtures {
  /**
   * Signs a scenario's user in without the sign-in pages: starts a session in the database the way the app does
   * (only the id's SHA-256 is stored) and puts the signed `koala_session` cookie into the browser context
   * (the test's own, unless another is given). The sign-in pages have their own tests (sign-in.spec.ts).
   */
  signIn: (scenario: Scenario, context?: BrowserContext) => Promise<{ id: number; email: string }>;
}

// The server runs with KOALA_ENV=development (plain http): no __Host- prefix, no Secure flag.
const sessionCookie = createCookie("koala_session", {
  httpOnly: true,
  sameSite: "lax",
  path: "/",
  secure: false,
  secrets: [E2E_SESSION_SECRET],
});

export const test = base.extend<TestFixtures, WorkerFixtures>({
  target: ["sqlite", { option: true, scope: "worker" }],
  server: [async ({ target }, provide) => provide(targetFor(target)), { scope: "worker" }],
  db: [
    async ({ server }, provide) => {
      // A Playwright worker serves one project, so one process-wide connection (the models' db()) is enough.
      const connection = connect(server.database, { poolSize: 2 });
      setConnection(connection);
      await provide(connection.db);
      setConnection(undefined);
      await connection.close();
    },
    { scope: "worker" },
  ],
  signIn: async ({ context, db, server }, provide, info) => {
    await provide(async (scenario, into = context) => {
      const email = emailFor(scenario, info.project.name);
      const user = await db.selectFrom("users").select("id").where("email", "=", email).executeTakeFirstOrThrow();
      const id = await startSession(user.id, { idleMs: 12 * 3_600_000, maxMs: 86_400_000 }, { ip: "127.0.0.1", userAgent: "e2e fixture" });
      const header = await sessionCookie.serialize(id);
      const value = header.slice("koala_session=".length, header.indexOf(";"));
      await into.addCookies([{ name: "koala_session", value, url: server.baseURL, httpOnly: true, sameSite: "Lax" }]);
      return { id: user.id, email };
    });
  },
});
