import type { APIRequestContext, Browser, Page, TestInfo } from "@playwright/test";
import { expect, test } from "./fixtures";
import type { DB } from "~/db/connection.server";
import {
  expectAccessible,
  hasJs,
  holdScripts,
  jpegFile,
  ownProject,
  projectId,
  shareLinkTo,
  tabTo,
  userFor,
  visitor,
  workshop,
} from "./support";

const e2eProject = "E2E Project";

test("dashboard: the Projects / Boards toggle and the layout persist, in cookies", async ({ page, signIn }, info) => {
  await signIn("dashboard");
  await page.goto("/dashboard");
  const show = page.getByRole("form", { name: "Show" });
  const layout = page.getByRole("form", { name: "Layout" });
  await expect(show.getByRole("button", { name: "Projects" })).toHaveAttribute("aria-pressed", "true");
  await expect(layout.getByRole("button", { name: "Carousel" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByRole("link", { name: /E2E Project/ })).toBeVisible();
  await show.getByRole("button", { name: "Boards" }).click();
  await expect(show.getByRole("button", { name: "Boards" })).toHaveAttribute("aria-pressed", "true");
  await layout.getByRole("button", { name: "List" }).click();
  await expect(layout.getByRole("button", { name: "List" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByRole("link", { name: /^Board 20/ })).toBeVisible();
  await page.reload();
  await expect(show.getByRole("button", { name: "Boards" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.locator("ul.cards.layout-list")).toBeVisible();
  const cookies = Object.fromEntries((await page.context().cookies()).map((c) => [c.name, c.value]));
  expect(cookies).toMatchObject({ selectedView: "boards", viewLayout: "list" });
  await expectAccessible(page, info);
});

test("terms dialog: No signs out, Yes is remembered on the account", async ({ page, signIn }, info) => {
  await signIn("terms");
  await page.goto("/dashboard");
  const dialog = page.getByRole("dialog", { name: "Terms and Conditions" });
  await expect(dialog).toBeVisible();
  await expectAccessible(page, info);
  await dialog.getByRole("button", { name: "No" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/dashboard");
  await expect(page).toHaveURL(/\/login$/); // signed out for real
  await signIn("terms");
  await page.goto("/dashboard");
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: "Yes" }).click();
  await expect(dialog).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
  await expect(dialog).toHaveCount(0);
});

test("terms dialog by keyboard: Yes, reached by Tab before the page's script has run, keeps the focus; Enter accepts", async ({
  page,
  signIn,
}, info) => {
  await signIn("termsKeys");
  // With JavaScript, the scripts are held back until Yes has the focus, as on a slow connection, then let through.
  const scripts = await holdScripts(page, info);
  const dialog = page.getByRole("dialog", { name: "Terms and Conditions" });
  const yes = dialog.getByRole("button", { name: "Yes" });
  const modal = page.locator("dialog.terms-dialog:modal");
  try {
    await page.goto("/dashboard", { waitUntil: "commit" });
    await expect(yes).toBeVisible();
    await tabTo(page, yes);
    // Still the server's dialog: the scripts were asked for and are waiting.
    if (hasJs(info)) expect(scripts.held()).toBeGreaterThan(0);
    await expect(modal).toHaveCount(0);
  } finally {
    scripts.release();
  }
  // Upgraded to a modal once the script runs (without JavaScript it stays as the server sent it).
  if (hasJs(info)) await expect(modal).toHaveCount(1);
  await expect(yes).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/dashboard$/);
  await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
  await expect(dialog).toHaveCount(0);
});

test("all boards: 12 first, then 4 more per step until all 21 are shown", async ({ page, signIn }, info) => {
  await signIn("boards");
  // A window tall enough for the first 12 and the 'Show more' link below them to be in view at once.
  await page.setViewportSize({ width: 1366, height: 1100 });
  await page.goto("/all-boards");
  const cards = page.getByRole("list", { name: "Boards" }).getByRole("listitem");
  await expect(cards).toHaveCount(12);
  // 21 boards: E2E Board and Board 01 … Board 20.
  if (hasJs(info)) {
    // Still 12 once the page is hydrated and settled: a link already in view at load is no scroll to the end.
    await page.waitForLoadState("networkidle");
    await page.waitForTimeout(1_000);
    await expect(cards).toHaveCount(12);
    await expect(page).not.toHaveURL(/count=/);
    await expect(page.getByRole("link", { name: "Show more" })).toBeInViewport();
    // Asked for (nothing to scroll here), then the same link is followed by itself each time it is in view.
    await page.getByRole("link", { name: "Show more" }).click();
    await expect(async () => {
      const more = page.getByRole("link", { name: "Show more" });
      if (await more.count()) await more.scrollIntoViewIfNeeded({ timeout: 1000 }).catch(() => {});
      expect(await cards.count()).toBe(21);
    }).toPass({ timeout: 20_000 });
    await expect(page).toHaveURL(/count=24/); // the URL keeps the count, as without JavaScript
  } else {
    for (const [count, expected] of [
      [16, 16],
      [20, 20],
      [24, 21],
    ] as const) {
      await page.getByRole("link", { name: "Show more" }).click();
      await expect(page).toHaveURL(new RegExp(`count=${count}`));
      await expect(cards).toHaveCount(expected);
    }
  }
  await expect(page.getByRole("link", { name: "Show more" })).toHaveCount(0);
  await expectAccessible(page, info);
});

test("all boards: search by title, filter by project, open a board", async ({ page, signIn, db }) => {
  await signIn("boards");
  await page.goto("/all-boards");
  const cards = page.getByRole("list", { name: "Boards" }).getByRole("listitem");
  await page.getByLabel("Search boards").fill("board 1");
  await page.getByRole("main").getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/q=board\+1/);
  await expect(cards).toHaveCount(10); // Board 10 … Board 19
  await page.getByLabel("Search boards").fill("no such board");
  await page.getByRole("main").getByRole("button", { name: "Search" }).click();
  await expect(page.getByText("No related boards found")).toBeVisible();

  // The title and the project together. Not the project alone: which boards its first page shows depends on their
  // versions, and a write elsewhere in the run (an attribute of the project moves every board on) can tie them all.
  await page.getByLabel("Search boards").fill("board 20");
  await page.getByLabel("Project", { exact: true }).selectOption({ label: e2eProject });
  await page.getByRole("main").getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(new RegExp(`project=${await projectId(db, e2eProject)}`));
  await expect(cards).toHaveCount(1);
  await cards.getByRole("link", { name: /^Board 20/ }).click();
  await expect(page).toHaveURL(new RegExp(`/${await projectId(db, e2eProject)}/board/[\\w-]+$`));
  await expect(page.getByRole("heading", { name: "Board 20" })).toBeVisible();
  await expect(page.getByText("No related images found")).toBeVisible();
});

test("all projects lists the member's projects only, and leads to the project and its upload page", async ({ page, signIn, db }, info) => {
  await signIn("clients");
  const id = await projectId(db, e2eProject);
  await page.goto("/all-clients");
  await expect(page.getByRole("link", { name: /E2E Project/ })).toBeVisible();
  await expect(page.getByRole("link", { name: /Other Project/ })).toHaveCount(0);
  await expectAccessible(page, info);
  await page.getByRole("link", { name: /E2E Project/ }).click();
  await expect(page).toHaveURL(new RegExp(`/client/${id}$`));
  // The header names the project and offers what an editor may do here; every control leads somewhere real.
  const header = page.getByRole("banner");
  await expect(header.getByText(e2eProject)).toBeVisible();
  await expect(header.getByRole("link", { name: "EP: all projects" })).toHaveAttribute("href", "/all-clients");
  await header.getByRole("link", { name: "Upload images" }).click();
  await expect(page).toHaveURL(new RegExp(`/upload/${id}$`));
  await expect(page.getByRole("heading", { name: "Upload images to E2E Project" })).toBeVisible();
  for (const link of await page.getByRole("banner").getByRole("link").all()) {
    const href = (await link.getAttribute("href"))!;
    expect((await page.request.get(href)).status(), href).toBe(200);
  }
});

/** Another upload into the project, through the HTTP API (sign, PUT, register) in the same signed-in context. */
async function uploadThroughApi(request: APIRequestContext, project: number, title: string) {
  const signed = await request.post("/api/uploads", { data: { clientID: project, fileName: `${title}.jpg` } });
  expect(signed.status()).toBe(200);
  const { uploadUrl, key } = (await signed.json()) as { uploadUrl: string; key: string };
  expect((await request.put(uploadUrl, { data: (await jpegFile(`${title}.jpg`, "#2266aa", 320, 240)).buffer })).status()).toBe(200);
  const registered = await request.post("/api/images", { data: { clientID: project, newImage: { imgURL: key, imgTitle: title } } });
  expect(registered.status()).toBe(201);
}

test("an open grid shows newer data: 'New Data Loaded' with JavaScript, the next page load without", async ({ page, signIn, db }, info) => {
  await signIn("fresh");
  const id = await ownProject(db, "fresh", info);
  await page.goto(`/client/${id}`);
  await expect(page.getByText("1 / 1 images")).toBeVisible();
  await expect(page.getByRole("article")).toHaveCount(1);
  const check = () => page.waitForResponse((r) => r.url().includes("check=version"));
  if (!hasJs(info)) {
    await uploadThroughApi(page.request, id, "Fresh arrival");
    await page.reload();
    await expect(page.getByText("2 / 2 images")).toBeVisible();
    await expect(page.getByRole("article").first()).toContainText("Fresh arrival");
    return;
  }
  const toast = page.getByRole("status").filter({ hasText: "New Data Loaded" });
  // The check runs every 20 s and when the tab becomes visible again. Nothing changed yet: no toast.
  await Promise.all([check(), page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")))]);
  await expect(toast).toHaveCount(0);
  await uploadThroughApi(page.request, id, "Fresh arrival");
  await page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
  await expect(toast).toBeVisible();
  // Cancel keeps the current view.
  await toast.getByRole("button", { name: "Cancel" }).click();
  await expect(toast).toHaveCount(0);
  await expect(page.getByRole("article")).toHaveCount(1);
  await uploadThroughApi(page.request, id, "Second arrival");
  await page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
  await expect(toast).toBeVisible();
  // Update Now loads the new data in place.
  await toast.getByRole("button", { name: "Update Now" }).click();
  await expect(toast).toHaveCount(0);
  await expect(page.getByText("3 / 3 images")).toBeVisible();
  await expect(page.getByRole("article").first()).toContainText("Second arrival");
});

test("project grid: every card past the server's first page shows as it is scrolled to, none left a placeholder", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("paging");
  await page.goto(`/client/${await projectId(db, e2eProject)}`);
  // With JavaScript the virtual grid starts from the server's 60 cards and fetches the rest in pages of 100.
  if (hasJs(info)) await page.locator(".virtual-grid").waitFor();
  else await page.getByRole("link", { name: "Next" }).click();
  // Grid images 130 … 1 come after the newer ones: 61st to 100th places (and past) are Grid image 70 down to 31.
  for (const n of ["070", "050", "031", "020"]) {
    const card = page.getByRole("article").filter({ hasText: `Grid image ${n}` });
    await expect(async () => {
      await page.mouse.wheel(0, 400);
      await expect(card).toBeVisible({ timeout: 500 });
    }).toPass({ timeout: 20_000 });
  }
  await expect(page.locator(".image-card-loading:visible")).toHaveCount(0);
});

test(
  "project grid: pages to the last image and back (virtual grid with JavaScript)",
  { tag: "@core" },
  async ({ page, signIn, db }, info) => {
    await signIn("paging");
    await page.goto(`/client/${await projectId(db, e2eProject)}`);
    await expect(page.getByRole("article").first()).toContainText("E2E image");
    if (hasJs(info)) {
      // The virtual grid renders only rows near the viewport and fetches pages as they come near. It replaces the
      // server's page on hydration: a key pressed before that scrolls the server's page, not the grid.
      await page.locator(".virtual-grid").waitFor();
      expect(await page.getByRole("article").count()).toBeLessThan(131);
      // End, and Home, again while the card is not in view: in two full CI runs on a busy machine one press did not
      // get there (2026-11-29: Home left the page mid-grid, its rows those of the end; 2026-12-02: after End no card
      // 001 for 10 s). Neither was reproduced here. One possible cause, a page the busy server refused (503), is now
      // asked for again (the next test); whatever else lost a press, a person presses again, as this does.
      await expect(async () => {
        await page.keyboard.press("End");
        await expect(page.getByRole("article").filter({ hasText: "Grid image 001" })).toBeVisible({ timeout: 5_000 });
      }).toPass({ timeout: 30_000 });
      await expect(page.getByText("131 / 131 images")).toBeVisible();
      await expect(async () => {
        await page.keyboard.press("Home");
        await expect(page.getByRole("article").filter({ hasText: "E2E image" })).toBeVisible({ timeout: 3_000 });
      }).toPass({ timeout: 15_000 });
      return;
    }
    await expect(page.getByText("60 / 131 images")).toBeVisible();
    await expect(page.getByRole("article")).toHaveCount(60);
    await page.getByRole("link", { name: "Next" }).click();
    await expect(page.getByText("120 / 131 images")).toBeVisible();
    await page.getByRole("link", { name: "Next" }).click();
    await expect(page.getByText("131 / 131 images")).toBeVisible();
    await expect(page.getByRole("article")).toHaveCount(11);
    await expect(page.getByRole("article").last()).toContainText("Grid image 001");
    await expect(page.getByRole("link", { name: "Next" })).toHaveCount(0);
    await page.getByRole("link", { name: "Previous" }).click();
    await expect(page.getByText("120 / 131 images")).toBeVisible();
    await expect(page.getByRole("article").first()).toContainText("Grid image 071");
  },
);

test(
  "virtual grid: a page the busy server refused (503, Retry-After) is asked for again and shown",
  { tag: "@js-only" },
  async ({ page, signIn, db }) => {
    await signIn("paging");
    // The server's admission control answers 503 with Retry-After when it is too busy (server/admission.ts). Here
    // every page the grid asks for gets that answer until the scroll to the end has settled: from then on nothing
    // but the grid's own retry asks for the last page again.
    let busy = true;
    const refusedAt: number[] = [];
    let served = 0;
    await page.route(/\/api\/grid\?.*(at|after)=/, async (route) => {
      if (busy) {
        refusedAt.push(Date.now());
        return route.fulfill({ status: 503, headers: { "Retry-After": "1" }, body: "The server is busy. Please try again in a moment." });
      }
      served++;
      return route.continue();
    });
    await page.goto(`/client/${await projectId(db, e2eProject)}`);
    await page.locator(".virtual-grid").waitFor();
    await expect(async () => {
      await page.keyboard.press("End");
      expect(await page.evaluate(() => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1)).toBe(true);
    }).toPass({ timeout: 30_000 });
    await expect(page.locator(".image-card-loading").first()).toBeAttached();
    // Once the scroll has settled, two refusals that each ended a quiet second (none in the 900 ms before): the grid
    // asks within moments of a render (a late re-measure within 500 ms), so a request after a second of quiet, twice,
    // is the retry's timer (Retry-After: 1). Without it this waits in vain.
    const settledAt = Date.now();
    const afterQuiet = () => refusedAt.filter((t, i) => t >= settledAt && i > 0 && t - refusedAt[i - 1]! >= 900).length;
    await expect.poll(afterQuiet, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    busy = false;
    await expect(page.getByRole("article").filter({ hasText: "Grid image 001" })).toBeVisible({ timeout: 20_000 });
    expect(served).toBeGreaterThan(0);
  },
);

/**
 * Presses Tab from the top of the page as a keyboard user does, following 'Skip to images' with Enter when it has
 * focus, until focus is inside the first image card; returns the presses of Tab it took (Infinity past 100).
 */
/** The look scenario's three grids: a project, its board Alpha, and Alpha shared, opened by a visitor (closed by the caller). */
async function threeGrids(page: Page, db: DB, browser: Browser, baseURL: string, info: TestInfo) {
  const w = await workshop(db, "look", info);
  const shared = await shareLinkTo(db, userFor(info, "look"), w.board("Alpha"));
  const guest = await visitor(browser, info, baseURL);
  const grids = [
    [page, `/client/${w.id}`],
    [page, w.path("Alpha")],
    [guest.page, shared],
  ] as const;
  return { grids, guest };
}

async function tabsToFirstCard(page: Page) {
  for (let presses = 1; presses <= 100; presses++) {
    await page.keyboard.press("Tab");
    const at = await page.evaluate(() => {
      const el = document.activeElement;
      return {
        skip: el?.textContent === "Skip to images",
        inFirstCard: Boolean(el?.closest("article")?.isSameNode(document.querySelector("article"))),
      };
    });
    if (at.inFirstCard) return presses;
    if (at.skip) await page.keyboard.press("Enter");
  }
  return Infinity;
}

test("keyboard: the first image of a project, a board and a shared board is at most 5 presses of Tab away, by 'Skip to images'", async ({
  page,
  signIn,
  db,
  browser,
  server,
}, info) => {
  await signIn("look");
  const { grids, guest } = await threeGrids(page, db, browser, server.baseURL, info);
  for (const [tab, path] of grids) {
    await tab.goto(path);
    await expect(tab.getByRole("region", { name: "Images" })).toBeVisible(); // the grid is a landmark
    await expect(tab.getByRole("article").first()).toBeVisible();
    // With JavaScript the virtual grid takes the server's cards' place once hydrated: start from that page.
    if (hasJs(info)) await tab.locator(".virtual-grid").waitFor();
    expect(await tabsToFirstCard(tab), path).toBeLessThanOrEqual(5);
    // And the sidebar, first Tab after its own skip link.
    await tab.goto(path);
    if (hasJs(info)) await tab.locator(".virtual-grid").waitFor();
    await tabTo(tab, tab.getByRole("link", { name: "Skip to search and filters" }), 3);
    await tab.keyboard.press("Enter");
    await tab.keyboard.press("Tab");
    await expect(tab.getByRole("searchbox", { name: "Search words" })).toBeFocused();
  }
  await guest.close();
});

test(
  "the project, board and shared-board grids hydrate without an error: the cards sent as HTML give way to the virtual grid",
  { tag: "@js-only" },
  async ({ page, signIn, db, browser, server }, info) => {
    await signIn("look");
    const { grids, guest } = await threeGrids(page, db, browser, server.baseURL, info);
    const errors: string[] = [];
    for (const tab of new Set(grids.map(([tab]) => tab))) {
      tab.on("pageerror", (e) => errors.push(e.message));
      tab.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
      // Cards taken out of the server's list before the list itself goes: hydration replaced what it should keep.
      await tab.addInitScript(() => {
        const w = window as unknown as { cardsTakenOut: number };
        w.cardsTakenOut = 0;
        new MutationObserver((records) => {
          for (const r of records)
            if ((r.target as Element).matches?.("ul.image-grid") && [...r.removedNodes].some((n) => n.nodeName === "LI")) w.cardsTakenOut++;
        }).observe(document, { childList: true, subtree: true });
      });
    }
    for (const [tab, path] of grids) {
      const html = await (await tab.request.get(path)).text();
      expect(html.match(/<article class="image-card"/g)?.length ?? 0, `${path}: cards in the server's HTML`).toBeGreaterThan(0);
      await tab.goto(path);
      await tab.locator(".virtual-grid").waitFor();
      await expect(tab.locator(".virtual-grid article").first()).toBeVisible();
      // The server's list is gone, not left beside the virtual one, and its cards stayed until it went.
      await expect(tab.locator("ul.image-grid")).toHaveCount(0);
      expect(await tab.evaluate(() => (window as unknown as { cardsTakenOut: number }).cardsTakenOut), path).toBe(0);
    }
    // A hydration mismatch is no failure for React: it logs an error and renders the page again in the browser.
    expect(errors).toEqual([]);
    await guest.close();
  },
);

/** The keyword chips of the cards that a clipping box cuts through (a chip shows whole or not at all), and the cards showing none. */
function cutChips(page: Page) {
  return page.evaluate(() => {
    const cut: string[] = [];
    for (const card of document.querySelectorAll("article.image-card")) {
      let whole = 0;
      for (const chip of card.querySelectorAll(".keywords li")) {
        const r = chip.getBoundingClientRect();
        let [left, top, right, bottom] = [r.left, r.top, r.right, r.bottom];
        // What shows of it: its box within every box between it and the card that clips, and within the card.
        for (let box = chip.parentElement; box; box = box.parentElement) {
          const style = getComputedStyle(box);
          if (box === card || style.overflowX !== "visible" || style.overflowY !== "visible") {
            const b = box.getBoundingClientRect();
            [left, top, right, bottom] = [
              Math.max(left, b.left),
              Math.max(top, b.top),
              Math.min(right, b.right),
              Math.min(bottom, b.bottom),
            ];
          }
          if (box === card) break;
        }
        // Half a pixel either way is rounding, not a cut.
        const [width, height] = [Math.max(0, right - left), Math.max(0, bottom - top)];
        const all = width > r.width - 0.5 && height > r.height - 0.5;
        if (width >= 0.5 && height >= 0.5 && !all)
          cut.push(
            `${card.getAttribute("aria-labelledby")}: “${chip.textContent}” shows ${Math.round(width)}×${Math.round(height)} of ${Math.round(r.width)}×${Math.round(r.height)}`,
          );
        if (all) whole++;
      }
      if (!whole && card.querySelector(".keywords li")) cut.push(`${card.getAttribute("aria-labelledby")}: no chip shows whole`);
    }
    return cut;
  });
}

test("keyword chips show whole or not at all on every card of a project, a board and a shared board, wide and narrow", async ({
  page,
  signIn,
  db,
  browser,
  server,
}, info) => {
  await signIn("look");
  const { grids, guest } = await threeGrids(page, db, browser, server.baseURL, info);
  for (const [tab, path] of grids)
    for (const width of [1366, 390]) {
      await tab.setViewportSize({ width, height: 900 });
      await tab.goto(path);
      await expect(tab.getByRole("article").first()).toBeVisible();
      if (hasJs(info)) await tab.locator(".virtual-grid").waitFor();
      await tab.mouse.move(0, 0); // no card under the pointer: each shows its footer as it rests
      await expect(tab.getByRole("article").first().locator(".keywords li").first()).toBeVisible();
      expect(await cutChips(tab), `${path} at ${width} px`).toEqual([]);
    }
  await guest.close();
});

test("the project grid passes axe", async ({ page, signIn, db }, info) => {
  await signIn("paging");
  await page.goto(`/client/${await projectId(db, e2eProject)}`);
  await expect(page.getByRole("article").first()).toContainText("E2E image");
  await expectAccessible(page, info);
});

test("select all selects the whole set, not just the page; then deselect", { tag: "@core" }, async ({ page, signIn, db }, info) => {
  await signIn("select");
  await page.goto(`/client/${await projectId(db, e2eProject)}`);
  await expect(page.getByText("0 selected")).toBeVisible();
  await page.getByRole("button", { name: "Select all" }).click();
  await expect(page.getByText("131 selected")).toBeVisible();
  const first = page.getByRole("article").first().getByRole("checkbox");
  await expect(first).toBeChecked();
  await first.uncheck();
  if (!hasJs(info)) await page.getByRole("button", { name: "Update selection" }).click();
  await expect(page.getByText("130 selected")).toBeVisible();
  // An image beyond the first page is selected too: the last one (virtual grid) or the first of page two.
  if (hasJs(info)) await page.keyboard.press("End");
  else await page.getByRole("link", { name: "Next" }).click();
  const beyond = page.getByRole("article").filter({ hasText: hasJs(info) ? "Grid image 001" : "Grid image 071" });
  await expect(beyond).toBeVisible();
  await expect(beyond.getByRole("checkbox")).toBeChecked();
  await page.getByRole("button", { name: "Deselect all" }).click();
  await expect(page.getByText("0 selected")).toBeVisible();
  await expect(page.getByRole("article").first()).toBeVisible();
  await expect(page.locator("article input[type=checkbox]:checked")).toHaveCount(0);
});

test("image panel opens and closes by keyboard", { tag: "@core" }, async ({ page, signIn, db }, info) => {
  await signIn("panel");
  const id = await projectId(db, e2eProject);
  await page.goto(`/client/${id}`);
  // With JavaScript the panel is the virtual grid's: the server's cards before it are plain links to the image page
  // (a CI run on a busy machine pressed Enter on one before hydration, and went to the page).
  if (hasJs(info)) await page.locator(".virtual-grid").waitFor();
  const view = page.getByRole("link", { name: "View E2E image" });
  // Past the header, the sidebar's searches and filters (capture date among them) and the project's links.
  await tabTo(page, view, 40);
  await page.keyboard.press("Enter");
  if (hasJs(info)) {
    const dialog = page.getByRole("dialog", { name: "E2E image" });
    await expect(dialog).toBeVisible();
    await expect(dialog.getByRole("heading", { name: "Keywords" })).toBeVisible();
    await expectAccessible(page, info);
    await page.keyboard.press("Escape");
    await expect(dialog).toBeHidden();
    await expect(view).toBeFocused();
  } else {
    await expect(page).toHaveURL(/\/image\/\d+\?from=/);
    await expect(page.getByRole("heading", { name: "E2E image" })).toBeVisible();
    await expect(page.getByText("No user attributes found. Use the 'Manage Attributes' tab to create new user attributes.")).toBeVisible();
    await expectAccessible(page, info);
    await tabTo(page, page.getByRole("link", { name: "← Back" }));
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(new RegExp(`/client/${id}$`));
  }
});

test("keyboard: a card focused before the page's script ran keeps the focus when the virtual grid takes the server's cards' place", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("handoff");
  const id = await projectId(db, e2eProject);
  // Three columns: a card past the first row (the virtual grid had four until it measured, and moved such a card).
  await page.setViewportSize({ width: 1000, height: 800 });
  // With JavaScript, the scripts are held back until a card has the focus, then let through.
  const scripts = await holdScripts(page, info);
  const view = page.getByRole("link", { name: "View Grid image 126" });
  try {
    await page.goto(`/client/${id}`, { waitUntil: "commit" });
    await expect(view).toBeVisible();
    await tabTo(page, view, 100);
    // Still the server's cards, the scripts asked for and waiting.
    await expect(page.locator(".virtual-grid")).toHaveCount(0);
    if (hasJs(info)) expect(scripts.held()).toBeGreaterThan(0);
  } finally {
    scripts.release();
  }
  if (hasJs(info)) {
    await page.locator(".virtual-grid").waitFor();
    // The same card's View link, now one of the virtual grid's (the server's was removed with its list) …
    const moved = page.locator(".virtual-grid").getByRole("link", { name: "View Grid image 126" });
    await expect(moved).toBeFocused();
    // … and it keeps it (nothing laid out again took it away).
    await page.waitForTimeout(500);
    await expect(moved).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(page.getByRole("dialog", { name: "Grid image 126" })).toBeVisible();
  } else {
    await expect(view).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { name: "Grid image 126" })).toBeVisible();
  }
});

test("unknown and foreign ids answer 404 with the spec's messages", async ({ page, signIn, db }, info) => {
  await signIn("notfound");
  const board = await db.selectFrom("boards").select(["id", "project_id"]).where("title", "=", "Secret board").executeTakeFirstOrThrow();
  let res = await page.goto(`/client/${board.project_id}`);
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: `No Projects Found with ID: ${board.project_id}` })).toBeVisible();
  res = await page.goto(`/${board.project_id}/board/${board.id}`);
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: `No Board Found with ID: ${board.id}` })).toBeVisible();
  res = await page.goto(`/${await projectId(db, e2eProject)}/board/nope`);
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "No Board Found with ID: nope" })).toBeVisible();
  res = await page.goto("/image/999999");
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Image not found" })).toBeVisible();
  await expectAccessible(page, info);
});
