import type { Page, TestInfo } from "@playwright/test";
import { expect, test } from "./fixtures";
import { emailFor, longListProject, type Scenario } from "./users";
import { expectAccessible, finishedJob, firstImage, projectId, shareLinkTo, storedApplication, userFor, workshop } from "./support";

/**
 * One look: every page at a laptop's and a phone's width, in the light and the dark theme. Each view's full-page
 * screenshot is kept with the test's results (to be looked at), and what can be measured is asserted: the page is
 * no wider than the window, every form control has the design tokens' height, border and radius, every button is
 * at least a control high, and axe finds nothing serious in either theme.
 */
const WIDTHS = [1366, 390] as const;
const THEMES = ["lightmode", "darkmode"] as const;

/** What a page's address is built from: the look workshop (see users.ts) and things made for the page. */
interface Ids {
  project: number;
  board: string;
  image: number;
  attribute: number;
  info: TestInfo;
  db: Parameters<typeof workshop>[0];
}

interface PageCase {
  name: string;
  /** Who looks: a seeded scenario's user, or nobody signed in. */
  who: Scenario | null;
  path: (ids: Ids) => string | Promise<string>;
  /** The grid whose images are selected first (a bulk page needs a selection). */
  selectOn?: (ids: Ids) => string;
}

const PROJECT_BULK = ["download", "add", "keywords", "delete", "attributes", "data", "export"];
const BOARD_BULK = ["copy", "move", "remove"];

const PAGES: PageCase[] = [
  { name: "sign-in", who: null, path: () => "/login" },
  { name: "sign-in with password", who: null, path: () => "/login?method=password" },
  { name: "registration", who: null, path: () => "/pending" },
  { name: "page not found", who: null, path: () => "/no/such/page" },
  { name: "company sign-in refused", who: null, path: () => "/auth/sso/e2e/callback?code=x&state=y" },
  { name: "terms", who: "lookTerms", path: () => "/terms" },
  { name: "dashboard", who: "look", path: () => "/dashboard" },
  { name: "all projects", who: "look", path: () => "/all-clients" },
  { name: "all boards", who: "look", path: () => "/all-boards" },
  { name: "project", who: "look", path: (i) => `/client/${i.project}` },
  {
    name: "project with a long filter list",
    who: "look",
    path: async (i) => `/client/${await projectId(i.db, longListProject(i.info.project.name, "look"))}`,
  },
  { name: "project edit", who: "look", path: (i) => `/client/${i.project}/edit` },
  { name: "board create", who: "look", path: (i) => `/client/${i.project}/boards/new` },
  { name: "board", who: "look", path: (i) => i.board },
  { name: "board edit", who: "look", path: (i) => `${i.board}/edit` },
  { name: "board delete", who: "look", path: (i) => `${i.board}/delete` },
  { name: "board share", who: "look", path: (i) => `${i.board}/share` },
  { name: "board image remove", who: "look", path: (i) => `${i.board}/remove/${i.image}` },
  { name: "image", who: "look", path: (i) => `/image/${i.image}` },
  { name: "image edit", who: "look", path: (i) => `/image/${i.image}?edit` },
  { name: "image assign attribute", who: "look", path: (i) => `/image/${i.image}/attributes` },
  { name: "image remove attribute", who: "look", path: (i) => `/image/${i.image}/attributes/${i.attribute}/remove` },
  { name: "image delete", who: "look", path: (i) => `/image/${i.image}/delete` },
  { name: "image pin", who: "look", path: (i) => `/image/${i.image}/pin` },
  { name: "upload", who: "look", path: (i) => `/upload/${i.project}` },
  { name: "manage attributes", who: "look", path: (i) => `/upload/${i.project}/attributes` },
  { name: "delete attribute", who: "look", path: (i) => `/upload/${i.project}/attributes/${i.attribute}/delete` },
  { name: "import attributes", who: "look", path: (i) => `/upload/${i.project}/import` },
  { name: "re-import", who: "look", path: (i) => `/upload/${i.project}/reimport` },
  ...PROJECT_BULK.map((op) => ({
    name: `project bulk ${op}`,
    who: "look" as const,
    path: (i: Ids) => `/client/${i.project}/bulk/${op}`,
    selectOn: (i: Ids) => `/client/${i.project}`,
  })),
  ...BOARD_BULK.map((op) => ({
    name: `board bulk ${op}`,
    who: "look" as const,
    path: (i: Ids) => `${i.board}/bulk/${op}`,
    selectOn: (i: Ids) => i.board,
  })),
  { name: "keyword search results", who: "look", path: () => "/result/keyword/shelf" },
  { name: "smart search results", who: "look", path: () => "/result/smart/shelf%20chocolate" },
  {
    name: "job",
    who: "look",
    path: async (i) =>
      `/jobs/${await finishedJob(i.db, userFor(i.info, "look"), { action: "keywords", affected: 3, back: `/client/${i.project}` })}`,
  },
  { name: "profile", who: "look", path: () => "/profile" },
  { name: "authenticator", who: "look", path: () => "/profile/totp" },
  { name: "shared board", who: null, path: (i) => sharedBoard(i) },
  { name: "shared image", who: null, path: async (i) => `${await sharedBoard(i)}/image/${i.image}` },
  { name: "admin registrations", who: "lookAdmin", path: () => "/admin" },
  {
    name: "admin application",
    who: "lookAdmin",
    path: async (i) => `/admin/registrations/${await storedApplication(`look-${i.info.project.name}-${Date.now()}@e2e.test`)}`,
  },
  { name: "admin users", who: "lookAdmin", path: () => "/admin/users" },
  {
    name: "admin user",
    who: "lookAdmin",
    path: async (i) =>
      `/admin/users/${(await i.db.selectFrom("users").select("id").where("email", "=", userFor(i.info, "look")).executeTakeFirstOrThrow()).id}`,
  },
  { name: "admin projects", who: "lookAdmin", path: () => "/admin/projects" },
  { name: "admin project", who: "lookAdmin", path: (i) => `/admin/projects/${i.project}` },
  { name: "admin audit", who: "lookAdmin", path: () => "/admin/audit" },
  { name: "admin company sign-in", who: "lookAdmin", path: () => "/admin/sign-in" },
  { name: "admin sign-in provider", who: "lookAdmin", path: () => "/admin/sign-in/providers/new" },
];

const sharedBoard = (i: Ids) => shareLinkTo(i.db, emailFor("look", i.info.project.name), i.board.split("/").pop()!);

/**
 * What the tokens make of a control here, read from the page's own stylesheet: a probe element given the tokens, and
 * every visible control compared with it. Returns each control that differs, described.
 */
function controlsOffToken(page: Page) {
  return page.evaluate(() => {
    const probe = document.createElement("div");
    probe.style.cssText =
      "position:absolute;visibility:hidden;height:var(--control-height);border:var(--control-border-width) solid var(--control-border);border-radius:var(--radius)";
    document.body.append(probe);
    const token = getComputedStyle(probe);
    const want = {
      height: probe.getBoundingClientRect().height,
      border: token.borderTopWidth,
      color: token.borderTopColor,
      radius: token.borderTopLeftRadius,
    };
    probe.remove();
    const off: string[] = [];
    const shown = (el: Element) => {
      const r = el.getBoundingClientRect();
      return r.width > 1 && r.height > 1 && r.right > 0 && !el.closest("[hidden], [aria-hidden='true'], .sr-only, .honeypot");
    };
    const name = (el: Element) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${el.getAttribute("name") ? `[name=${el.getAttribute("name")}]` : ""}${
        el.classList.length ? `.${[...el.classList].join(".")}` : ""
      } “${(el.textContent ?? "").trim().slice(0, 30)}”`;
    const fields = document.querySelectorAll(
      "input:not([type=checkbox], [type=radio], [type=file], [type=range], [type=hidden]), select, textarea",
    );
    for (const el of fields) {
      if (!shown(el)) continue;
      const s = getComputedStyle(el);
      const height = el.getBoundingClientRect().height;
      if (el.tagName !== "TEXTAREA" && Math.abs(height - want.height) > 0.5)
        off.push(`${name(el)}: height ${height}, token ${want.height}`);
      for (const side of ["Top", "Right", "Bottom", "Left"] as const)
        if (s[`border${side}Width`] !== want.border) off.push(`${name(el)}: border-${side.toLowerCase()} ${s[`border${side}Width`]}`);
      const marked = el === document.activeElement || el.getAttribute("aria-invalid") === "true";
      if (!marked && s.borderTopColor !== want.color) off.push(`${name(el)}: border colour ${s.borderTopColor}, token ${want.color}`);
      if (s.borderTopLeftRadius !== want.radius) off.push(`${name(el)}: radius ${s.borderTopLeftRadius}, token ${want.radius}`);
    }
    for (const el of document.querySelectorAll(".btn")) {
      if (!shown(el)) continue;
      const height = el.getBoundingClientRect().height;
      if (height < want.height - 0.5) off.push(`${name(el)}: button height ${height}, below the token's ${want.height}`);
      if (getComputedStyle(el).borderTopLeftRadius !== want.radius)
        off.push(`${name(el)}: radius ${getComputedStyle(el).borderTopLeftRadius}`);
    }
    return off;
  });
}

/** How far the page is wider than the window, and the elements sticking out (none within a scrolling box). */
function overflow(page: Page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const extra = document.documentElement.scrollWidth - width;
    if (extra <= 0) return [];
    const scrolls = (el: Element | null): boolean =>
      el !== null &&
      el !== document.body &&
      (["auto", "scroll", "hidden"].includes(getComputedStyle(el).overflowX) || scrolls(el.parentElement));
    return [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > width + 1 && !scrolls(el.parentElement))
      .slice(0, 5)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}.${[...el.classList].join(".")} ends at ${Math.round(el.getBoundingClientRect().right)} (window ${width})`,
      );
  });
}

for (const view of PAGES) {
  test(`one look: ${view.name} at 1366 and 390 px, light and dark`, async ({ page, context, signIn, db, server }, info) => {
    if (view.who) await signIn(view.who);
    const w = await workshop(db, "look", info);
    const ids: Ids = {
      project: w.id,
      board: w.path("Alpha"),
      image: await firstImage(db, w.id),
      attribute: (
        await db
          .selectFrom("attributes")
          .select("id")
          .where("project_id", "=", w.id)
          .where("name", "=", "Channel")
          .executeTakeFirstOrThrow()
      ).id,
      info,
      db,
    };
    const path = await view.path(ids);
    if (view.selectOn) await page.request.post(view.selectOn(ids), { form: { intent: "select-all" } });
    for (const theme of THEMES) {
      await context.addCookies([{ name: "theme", value: theme, url: server.baseURL }]);
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(path);
        await page.waitForLoadState("networkidle");
        await expect(page.locator("html")).toHaveClass(theme);
        const file = info.outputPath(`${view.name.replace(/\W+/g, "-")}-${width}-${theme}.png`);
        await page.screenshot({ path: file, fullPage: true });
        await info.attach(`${view.name} ${width}px ${theme}`, { path: file, contentType: "image/png" });
        expect(await overflow(page), `${width}px ${theme}: wider than the window`).toEqual([]);
        expect(await controlsOffToken(page), `${width}px ${theme}: controls off the tokens`).toEqual([]);
        if (width === WIDTHS[0]) await expectAccessible(page, info);
      }
    }
  });
}
