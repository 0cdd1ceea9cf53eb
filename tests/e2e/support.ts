import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import sharp from "sharp";
import { expect, type Browser, type Locator, type Page, type TestInfo } from "@playwright/test";
import type { DB } from "~/db/connection.server";
import { totpCode } from "~/lib/totp.server";
import { enqueueJob } from "~/models/jobs.server";
import { submitRegistration } from "~/models/registrations.server";
import { boardScope } from "~/models/scope.server";
import { createShareLinks, type LinkOptions } from "~/models/share-links.server";
import { MAIL_DIR } from "./targets";
import { emailFor, PASSWORD, TOTP_SECRET, uploadProject, boardsProject, type Scenario } from "./users";

export { PASSWORD };
export const hasJs = (info: TestInfo) => info.project.use.javaScriptEnabled !== false;

/**
 * With JavaScript, holds the page's scripts back (as a slow machine or network does) until `release`; `held()` says
 * how many were asked for meanwhile. Without JavaScript there is nothing to hold.
 */
export async function holdScripts(page: Page, info: TestInfo) {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  if (hasJs(info))
    await page.route("**/assets/**/*.js", async (route) => {
      held += 1;
      await released;
      await route.continue();
    });
  return { release, held: () => held };
}
export const userFor = (info: TestInfo, scenario: Scenario) => emailFor(scenario, info.project.name);

/** The code of the current step, or of a later one (the app accepts ±1 step). */
export const code = (offsetSteps = 0) => totpCode(TOTP_SECRET, Date.now() + offsetSteps * 30_000);

/** A real JPEG file, made on the fly, as a file input takes it. */
export async function jpegFile(name: string, color: string, width = 640, height = 480) {
  const buffer = await sharp({ create: { width, height, channels: 3, background: color } })
    .jpeg()
    .toBuffer();
  return { name, mimeType: "image/jpeg", buffer };
}

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
  return fillPasswordForm(page, email, PASSWORD, mfa);
}

export async function fillPasswordForm(page: Page, email: string, password: string, mfa: string) {
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByLabel("Code", { exact: true }).fill(mfa);
  // Wait for this submission's answer, so a message left from an earlier attempt cannot pass for it.
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname.startsWith("/login")),
    page.getByRole("button", { name: "Login" }).click(),
  ]);
  return response;
}

/**
 * axe-core on the current page: no serious or critical violations (nor any of the rules in `also`, whatever their
 * impact: heading-order is "moderate"). axe runs as script and never finishes in a page without it, so for a page
 * without JavaScript the same HTML, its scripts taken out, is written into a scripting page of the same origin, URL
 * and window size (one such page per browser, reused: a new context and page for each check cost more than axe).
 */
export async function expectAccessible(page: Page, info: TestInfo, also: string[] = []) {
  // A page still arriving (a form's answer streamed in) would be checked half-parsed: a landmark whose heading has
  // not come yet reads as a violation.
  await page.waitForLoadState("load");
  const target = hasJs(info) ? page : await scriptingCopy(page);
  const results = await new AxeBuilder({ page: target }).analyze();
  const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical" || also.includes(v.id));
  expect(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

const scriptingPages = new WeakMap<Browser, Promise<Page>>();

async function scriptingCopy(page: Page): Promise<Page> {
  const browser = page.context().browser()!;
  let made = scriptingPages.get(browser);
  if (!made || (await made.then((p) => p.isClosed()).catch(() => true))) {
    made = browser.newContext({ javaScriptEnabled: true }).then((context) => context.newPage());
    scriptingPages.set(browser, made);
  }
  const target = await made;
  const url = new URL(page.url());
  if (new URL(target.url()).origin !== url.origin) {
    // An empty page of the app's origin to write into: relative addresses and the stylesheets resolve as on the page.
    const blank = `${url.origin}/__axe-blank`;
    await target.route(blank, (route) => route.fulfill({ body: "<!doctype html><title>-</title>", contentType: "text/html" }));
    try {
      await target.goto(blank);
    } finally {
      await target.unroute(blank);
    }
  }
  // The page as it stands, without what would run in a scripting page: taken from the DOM (evaluate works without
  // JavaScript), not by pattern from its text.
  const html = await page.evaluate(() => {
    // Imported into a document of its own, the copy loads nothing (its images would be fetched again in this one).
    const copy = document.implementation.createHTMLDocument("").importNode(document.documentElement, true);
    for (const script of copy.querySelectorAll("script")) script.remove();
    for (const el of copy.querySelectorAll("*"))
      for (const { name } of [...el.attributes]) if (name.toLowerCase().startsWith("on")) el.removeAttribute(name);
    const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : "";
    return `${doctype}${copy.outerHTML}`;
  });
  await target.setViewportSize(page.viewportSize() ?? { width: 1280, height: 720 });
  await target.evaluate((href) => history.replaceState(null, "", href), url.href);
  await target.setContent(html, { waitUntil: "load" });
  return target;
}

/**
 * Presses Tab until `target` has focus, as a keyboard user does, and fails if it does not arrive within
 * `max` presses (so a control that drops out of the tab order, or moves far down it, is noticed).
 */
export async function tabTo(page: Page, target: Locator, max = 30) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if (await target.evaluate((el) => el === document.activeElement)) return;
  }
  await expect(target, `not reached in ${max} presses of Tab`).toBeFocused({ timeout: 1 });
}

/**
 * A field where a TOTP code is typed: a numeric keypad, the authenticator's autofill and the rule as its pattern.
 * "12ab 34" typed into it is refused with the spec's message by `submit`; with JavaScript the letters never appear,
 * without it the server refuses them and the code does not come back into the field.
 */
export async function expectCodeField(page: Page, info: TestInfo, submit: () => Promise<unknown>) {
  const field = page.getByLabel("Code", { exact: true });
  await expect(field).toHaveAttribute("inputmode", "numeric");
  await expect(field).toHaveAttribute("autocomplete", "one-time-code");
  await expect(field).toHaveAttribute("pattern", "[ ]*(?:[0-9][ ]*){6}");
  await field.fill("12ab 34");
  if (hasJs(info)) await expect(field).toHaveValue("12 34");
  await submit();
  await expect(page.getByText("Please enter a valid MFA code.")).toBeVisible();
  await expect(field).toHaveValue(hasJs(info) ? "12 34" : "");
}

// Test data read and written through the app's own connection (fixtures.ts `db`): SQLite or PostgreSQL alike.

export const projectId = async (db: DB, name: string) =>
  (await db.selectFrom("projects").select("id").where("name", "=", name).executeTakeFirstOrThrow()).id;

/** The project of its own a scenario's user got from the seed (see OWN_PROJECT in users.ts). */
export const ownProject = (db: DB, scenario: Scenario, info: TestInfo) => projectId(db, uploadProject(scenario, info.project.name));

/** A board workshop (see BOARD_PROJECT in users.ts): the project's id and its boards' ids by title. */
export async function workshop(db: DB, scenario: Scenario, info: TestInfo) {
  const id = await projectId(db, boardsProject(scenario, info.project.name));
  const boards = await db.selectFrom("boards").select(["id", "title"]).where("project_id", "=", id).execute();
  const board = (title: string) => boards.find((b) => b.title === title)!.id;
  return { id, board, path: (title: string) => `/${id}/board/${board(title)}` };
}

/** The image ids on a board, in id order (test fixtures only). */
export const imagesOnBoard = async (db: DB, boardId: string) =>
  (await db.selectFrom("board_images").select("image_id").where("board_id", "=", boardId).orderBy("image_id").execute()).map(
    (r) => r.image_id,
  );

export const imagesIn = async (db: DB, project: number) =>
  Number(
    (
      await db
        .selectFrom("images")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("project_id", "=", project)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** The first image of a project (an own project's seeded image). */
export const firstImage = async (db: DB, project: number) =>
  (await db.selectFrom("images").select("id").where("project_id", "=", project).orderBy("id").limit(1).executeTakeFirstOrThrow()).id;

/** The e2e image's id and stored keys. */
export const e2eImage = (db: DB) =>
  db.selectFrom("images").select(["id", "storage_key", "thumb_key"]).where("title", "=", "E2E image").executeTakeFirstOrThrow();

/** Test-only time travel: makes every sign-in link of a user expired. */
export async function expireLinks(db: DB, email: string) {
  const user = await db.selectFrom("users").select("id").where("email", "=", email).executeTakeFirstOrThrow();
  await db
    .updateTable("sign_in_tokens")
    .set({ expires_at: Date.now() - 1 })
    .where("user_id", "=", user.id)
    .execute();
}

/** Chooses a bulk action: a button of the grid's form without JavaScript, an item of the Bulk actions menu with it. */
export async function bulk(page: Page, info: TestInfo, label: string) {
  if (hasJs(info)) await page.getByText("Bulk actions", { exact: true }).click();
  await page.getByRole("list", { name: "Bulk actions" }).getByRole("button", { name: label, exact: true }).click();
}

/** The toast region's message. */
export const toast = (page: Page) => page.getByRole("status").filter({ has: page.locator(".toast") });

/** An application stored the way the form stores it (the admin tests start from one). */
export async function storedApplication(email: string, client = "E2E Project") {
  const result = await submitRegistration(
    {
      name: "Grace",
      surname: "Hopper",
      email,
      country_code: "US",
      mobile: "821234567",
      country: "US",
      timezone: "1",
      org_unit: "Research",
      language: "en",
      client,
      sim_use: "Packaging research",
    },
    "127.0.0.1",
  );
  if (result.outcome !== "stored") throw new Error(`application not stored: ${result.outcome}`);
  return result.id;
}

/** A share link to a board, made as its editor would make one on the Share page; its path, token and all. */
export async function shareLinkTo(
  db: DB,
  email: string,
  boardId: string,
  options: LinkOptions = { expiry: "30", allowDownload: true, showMetadata: true },
  label = "e2e",
) {
  const user = await db.selectFrom("users").select("id").where("email", "=", email).executeTakeFirstOrThrow();
  const scope = await boardScope({ id: user.id, role: "user" }, boardId);
  const [link] = await createShareLinks(scope, [null], options, label);
  return link!.path;
}

/** A visitor of a share link: a browser context of its own, with no session, JavaScript as the project runs it. */
export async function visitor(browser: Browser, info: TestInfo, baseURL: string) {
  const context = await browser.newContext({ javaScriptEnabled: hasJs(info), baseURL });
  return { page: await context.newPage(), close: () => context.close() };
}

/** A finished bulk job of a person (its page shows the outcome; never picked up by a worker). */
export async function finishedJob(db: DB, email: string, result: { action: string; affected: number; back: string }) {
  const user = await db.selectFrom("users").select("id").where("email", "=", email).executeTakeFirstOrThrow();
  const id = await enqueueJob("bulk.action", null, { ownerUserId: user.id, runAt: Date.now() + 86_400_000 });
  // Written as done directly: no worker ran it, so there is no lease for completeJob to check.
  await db
    .updateTable("jobs")
    .set({ status: "done", payload: "null", result: JSON.stringify(result) })
    .where("id", "=", id)
    .execute();
  return id;
}
