import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, type TestInfo } from "@playwright/test";
import Database from "better-sqlite3";
import { totpCode } from "../../app/lib/totp.server";
import { E2E_DIR, MAIL_DIR } from "./global-setup";
import { emailFor, PASSWORD, TOTP_SECRET, type Scenario } from "./users";

export { PASSWORD };
export const hasJs = (info: TestInfo) => info.project.name === "js";
export const userFor = (info: TestInfo, scenario: Scenario) => emailFor(scenario, info.project.name);

/** The code of the current step, or of a later one (the app accepts ±1 step). */
export const code = (offsetSteps = 0) => totpCode(TOTP_SECRET, Date.now() + offsetSteps * 30_000);

/** Waits for the newest message to `to` that arrived after `since`, as received by the test's SMTP server. */
export async function waitForMail(to: string, since: number, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const files = readdirSync(MAIL_DIR)
      .filter((f) => Number(f.split("-")[0]) >= since)
      .sort();
    for (const f of files.reverse()) {
      const mail = JSON.parse(readFileSync(path.join(MAIL_DIR, f), "utf8")) as { to: string[]; raw: string };
      if (mail.to.includes(to)) return mail.raw;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`No mail to ${to} within ${timeoutMs} ms`);
}

export function linkIn(raw: string): string {
  const text = raw.replace(/=\r?\n/g, "");
  const m = /https?:\/\/[^\s"<>]+\/auth\/[A-Za-z0-9_-]{40,}/.exec(text);
  if (!m) throw new Error("No sign-in link in the mail");
  return new URL(m[0]).pathname;
}

/** Requests a magic link on the login page and returns the path of the link in the mail. */
export async function requestLink(page: Page, email: string): Promise<string> {
  const since = Date.now() - 1;
  await page.goto("/login");
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByRole("button", { name: "Submit" }).click();
  await expect(page.getByText("The link has been sent please check your email:")).toBeVisible();
  return linkIn(await waitForMail(email, since));
}

/** Follows a sign-in link: with JavaScript the page signs in by itself; without, the person presses the button. */
export async function followLink(page: Page, info: TestInfo, linkPath: string) {
  await page.goto(linkPath);
  if (!hasJs(info)) {
    await expect(page.getByText("Logging in…")).toBeVisible();
    await page.getByRole("button", { name: "Continue to Koala" }).click();
  }
}

export async function signInWithPassword(page: Page, email: string, mfa = code()) {
  await page.goto("/login?method=password");
  await fillPasswordForm(page, email, PASSWORD, mfa);
}

export async function fillPasswordForm(page: Page, email: string, password: string, mfa: string) {
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByLabel("Code", { exact: true }).fill(mfa);
  // Wait for this submission's answer, so a message left from an earlier attempt cannot pass for it.
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname.startsWith("/login")),
    page.getByRole("button", { name: "Login" }).click(),
  ]);
}

/**
 * axe-core on the current page: no serious or critical violations. axe runs as script, so for a
 * page without JavaScript the same HTML is loaded into a scripting page whose own scripts are blocked.
 */
export async function expectAccessible(page: Page, info: TestInfo) {
  let target = page;
  const html = hasJs(info) ? null : await page.content();
  if (html !== null) {
    const context = await page.context().browser()!.newContext({ javaScriptEnabled: true });
    target = await context.newPage();
    await target.route("**/*", (route) =>
      route.request().resourceType() === "script"
        ? route.abort()
        : route.request().isNavigationRequest()
          ? route.fulfill({ body: html, contentType: "text/html" })
          : route.continue(),
    );
    await target.goto(page.url());
  }
  const results = await new AxeBuilder({ page: target }).analyze();
  if (target !== page) await target.context().close();
  const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

/** Test-only time travel: makes every sign-in link of a user expired, straight in the e2e database. */
export function expireLinks(email: string) {
  const db = new Database(path.join(E2E_DIR, "data", "koala.sqlite"));
  try {
    db.pragma("busy_timeout = 5000");
    db.prepare("update sign_in_tokens set expires_at = ? where user_id = (select id from users where email = ?)").run(Date.now() - 1, email);
  } finally {
    db.close();
  }
}

/** The e2e image's id and stored keys, read from the e2e database. */
export const e2eImage = () => e2eRow<{ id: number; storage_key: string; thumb_key: string }>("select id, storage_key, thumb_key from images where title = 'E2E image'");

/** Reads one row from the e2e database (test fixtures only). */
export function e2eRow<T>(query: string, ...params: unknown[]): T {
  const db = new Database(path.join(E2E_DIR, "data", "koala.sqlite"), { readonly: true });
  try {
    return db.prepare(query).get(...params) as T;
  } finally {
    db.close();
  }
}

/** Reads rows from the e2e database (test fixtures only). */
export function e2eRows<T>(query: string, ...params: unknown[]): T[] {
  const db = new Database(path.join(E2E_DIR, "data", "koala.sqlite"), { readonly: true });
  try {
    return db.prepare(query).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Test-only: marks the e2e project as changed on the server (its updated_at moves on). */
export function touchE2eProject() {
  const db = new Database(path.join(E2E_DIR, "data", "koala.sqlite"));
  try {
    db.pragma("busy_timeout = 5000");
    db.prepare("update projects set updated_at = updated_at + 1 where name = 'E2E Project'").run();
  } finally {
    db.close();
  }
}
