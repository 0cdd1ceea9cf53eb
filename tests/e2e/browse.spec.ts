import { expect, test, type Page } from "@playwright/test";
import type { Scenario } from "./users";
import { code, e2eRow, expectAccessible, hasJs, signInWithPassword, touchE2eProject, userFor } from "./support";

const project = () => e2eRow<{ id: number }>("select id from projects where name = 'E2E Project'");
const secretBoard = () => e2eRow<{ id: string; project_id: number }>("select id, project_id from boards where title = 'Secret board'");

/** Each test signs in as its own user: a TOTP step is accepted once per user. */
async function signedIn(page: Page, info: Parameters<typeof userFor>[0], scenario: Scenario) {
  await signInWithPassword(page, userFor(info, scenario));
  await expect(page).toHaveURL(/\/dashboard$/);
}

test("dashboard: the Projects / Boards toggle and the layout persist, in cookies", async ({ page }, info) => {
  await signedIn(page, info, "dashboard");
  const show = page.getByRole("form", { name: "Show" });
  const layout = page.getByRole("form", { name: "Layout" });
  await expect(show.getByRole("button", { name: "Projects" })).toHaveAttribute("aria-pressed", "true");
  await expect(layout.getByRole("button", { name: "Carousel" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByRole("link", { name: /E2E Project/ })).toBeVisible();
  await show.getByRole("button", { name: "Boards" }).click();
  await expect(show.getByRole("button", { name: "Boards" })).toHaveAttribute("aria-pressed", "true");
  await layout.getByRole("button", { name: "List" }).click();
  await expect(layout.getByRole("button", { name: "List" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByRole("link", { name: /Board 20/ })).toBeVisible();
  await page.reload();
  await expect(show.getByRole("button", { name: "Boards" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.locator("ul.cards.layout-list")).toBeVisible();
  const cookies = Object.fromEntries((await page.context().cookies()).map((c) => [c.name, c.value]));
  expect(cookies).toMatchObject({ selectedView: "boards", viewLayout: "list" });
  await expectAccessible(page, info);
});

test("terms dialog: No signs out, Yes is remembered on the account", async ({ page }, info) => {
  await signInWithPassword(page, userFor(info, "terms"));
  const dialog = page.getByRole("dialog", { name: "Terms and Conditions" });
  await expect(dialog).toBeVisible();
  await expectAccessible(page, info);
  await dialog.getByRole("button", { name: "No" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await signInWithPassword(page, userFor(info, "terms"), code(1));
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: "Yes" }).click();
  await expect(dialog).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
  await expect(dialog).toHaveCount(0);
});

test("all boards: 12 first, 4 more per step, search and project filter", async ({ page }, info) => {
  await signedIn(page, info, "boards");
  await page.goto("/all-boards");
  const cards = page.getByRole("list", { name: "Boards" }).getByRole("listitem");
  await expect(cards).toHaveCount(12);
  // 21 boards: E2E Board and Board 01 … Board 20.
  if (hasJs(info)) {
    // Infinite scroll: the same links, followed by themselves each time they come into view.
    await expect(async () => {
      const more = page.getByRole("link", { name: "Show more" });
      if (await more.count()) await more.scrollIntoViewIfNeeded({ timeout: 1000 }).catch(() => {});
      expect(await cards.count()).toBe(21);
    }).toPass({ timeout: 20_000 });
    await expect(page).toHaveURL(/count=24/); // the URL keeps the count, as without JavaScript
  } else {
    for (const [count, expected] of [[16, 16], [20, 20], [24, 21]] as const) {
      await page.getByRole("link", { name: "Show more" }).click();
      await expect(page).toHaveURL(new RegExp(`count=${count}`));
      await expect(cards).toHaveCount(expected);
    }
  }
  await expect(page.getByRole("link", { name: "Show more" })).toHaveCount(0);
  await expectAccessible(page, info);

  await page.getByLabel("Search boards").fill("board 1");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/q=board\+1/);
  await expect(cards).toHaveCount(10); // Board 10 … Board 19
  await page.getByLabel("Search boards").fill("no such board");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByText("No related boards found")).toBeVisible();

  await page.getByLabel("Search boards").fill("");
  await page.getByLabel("Project", { exact: true }).selectOption({ label: "E2E Project" });
  await page.getByRole("button", { name: "Search" }).click();
  await expect(cards.first()).toBeVisible();
  await cards.filter({ hasText: "Board 20" }).getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`/${project().id}/board/[\\w-]+$`));
  await expect(page.getByRole("heading", { name: "Board 20" })).toBeVisible();
  await expect(page.getByText("No related images found")).toBeVisible();
});

test("all projects lists the member's projects only", async ({ page }, info) => {
  await signedIn(page, info, "clients");
  await page.goto("/all-clients");
  await expect(page.getByRole("link", { name: /E2E Project/ })).toBeVisible();
  await expect(page.getByRole("link", { name: /Other Project/ })).toHaveCount(0);
  await expectAccessible(page, info);
  await page.getByRole("link", { name: /E2E Project/ }).click();
  await expect(page).toHaveURL(new RegExp(`/client/${project().id}$`));
  // The header now names the project and offers its actions; features not built yet (edit, new board) answer 404.
  const header = page.getByRole("banner");
  await expect(header.getByText("E2E Project")).toBeVisible();
  await expect(header.getByRole("link", { name: "EP: all projects" })).toHaveAttribute("href", "/all-clients");
  await header.getByRole("link", { name: "Upload images" }).click();
  await expect(page).toHaveURL(new RegExp(`/upload/${project().id}$`));
  await expect(page.getByRole("heading", { name: "Upload images to E2E Project" })).toBeVisible();
  await page.goto(`/client/${project().id}`);
  await page.getByRole("banner").getByRole("link", { name: "Create board" }).click();
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await page.getByRole("link", { name: "Back to dashboard" }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
});

test("an open grid offers newer data: 'New Data Loaded' with JavaScript, a plain reload without", async ({ page }, info) => {
  await signedIn(page, info, "fresh");
  await page.goto(`/client/${project().id}`);
  await expect(page.getByRole("article").first()).toBeVisible();
  touchE2eProject();
  if (!hasJs(info)) {
    await page.reload();
    await expect(page.getByText("New Data Loaded")).toHaveCount(0);
    await expect(page.getByRole("article").first()).toBeVisible();
    return;
  }
  // The check runs every 20 s and when the tab becomes visible again.
  await page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
  const toast = page.getByRole("status").filter({ hasText: "New Data Loaded" });
  await expect(toast).toBeVisible();
  await toast.getByRole("button", { name: "Cancel" }).click();
  await expect(toast).toHaveCount(0);
  touchE2eProject();
  await page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
  await expect(toast).toBeVisible();
  await toast.getByRole("button", { name: "Update Now" }).click();
  await expect(toast).toHaveCount(0);
  await expect(page.getByRole("article").first()).toBeVisible();
});

test("project grid: pages to the last image and back (virtual grid with JavaScript)", async ({ page }, info) => {
  await signedIn(page, info, "paging");
  await page.goto(`/client/${project().id}`);
  await expect(page.getByRole("article").first()).toContainText("E2E image");
  await expectAccessible(page, info);
  if (hasJs(info)) {
    // The virtual grid renders only rows near the viewport and fetches pages as they come near.
    expect(await page.getByRole("article").count()).toBeLessThan(131);
    await page.keyboard.press("End");
    await expect(page.getByRole("article").filter({ hasText: "Grid image 001" })).toBeVisible();
    await expect(page.getByText("131 / 131 images")).toBeVisible();
    await page.keyboard.press("Home");
    await expect(page.getByRole("article").filter({ hasText: "E2E image" })).toBeVisible();
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
});

test("select all selects the whole set, not just the page; then deselect", async ({ page }, info) => {
  await signedIn(page, info, "select");
  await page.goto(`/client/${project().id}`);
  await expect(page.getByText("0 selected")).toBeVisible();
  await page.getByRole("button", { name: "Select all" }).click();
  await expect(page.getByText("131 selected")).toBeVisible();
  const first = page.getByRole("article").first().getByRole("checkbox");
  await expect(first).toBeChecked();
  await first.uncheck();
  if (!hasJs(info)) await page.getByRole("button", { name: "Update selection" }).click();
  await expect(page.getByText("130 selected")).toBeVisible();
  // Images beyond the first page are selected too.
  if (hasJs(info)) await page.keyboard.press("End");
  else await page.getByRole("link", { name: "Next" }).click();
  await expect(page.getByRole("article").filter({ hasText: "Grid image 001" }).or(page.getByRole("article").filter({ hasText: "Grid image 071" })).getByRole("checkbox")).toBeChecked();
  await page.getByRole("button", { name: "Deselect all" }).click();
  await expect(page.getByText("0 selected")).toBeVisible();
  await expect(page.getByRole("article").first().getByRole("checkbox")).not.toBeChecked();
});

test("image panel opens and closes by keyboard", async ({ page }, info) => {
  await signedIn(page, info, "panel");
  await page.goto(`/client/${project().id}`);
  const view = page.getByRole("link", { name: "View E2E image" });
  await view.focus();
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
    await page.getByRole("link", { name: "← Back" }).focus();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(new RegExp(`/client/${project().id}`));
  }
});

test("unknown and foreign ids answer 404 with the spec's messages", async ({ page }, info) => {
  await signedIn(page, info, "notfound");
  const board = secretBoard();
  let res = await page.goto(`/client/${board.project_id}`);
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: `No Projects Found with ID: ${board.project_id}` })).toBeVisible();
  res = await page.goto(`/${board.project_id}/board/${board.id}`);
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: `No Board Found with ID: ${board.id}` })).toBeVisible();
  res = await page.goto(`/${project().id}/board/nope`);
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "No Board Found with ID: nope" })).toBeVisible();
  res = await page.goto("/image/999999");
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Image not found" })).toBeVisible();
  await expectAccessible(page, info);
});
