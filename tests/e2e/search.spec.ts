import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { bulk, expectAccessible, hasJs, projectId, shareLinkTo, tabTo, toast, visitor, workshop } from "./support";
import { boardsProject, longListProject, secondProject, WORKSHOP_ATTRIBUTES } from "./users";

// The board workshop (users.ts): images "Workshop 1".."Workshop 6", odd ones with the keyword shelf, even ones aisle,
// each described "Image n of the board workshop"; board Alpha holds images 1-3.

/** The cards' texts once the whole page is in: a page streams, and the grid's last cards may still be on the way. */
const titles = async (page: Page) => {
  await page.waitForLoadState("load");
  return (await page.getByRole("article").allTextContents()).map((t) => t.trim());
};

test("keyword search from the sidebar narrows the project's grid and a board's, kept in the URL; Clear search shows all again @core", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("searchGrid");
  const w = await workshop(db, "searchGrid", info);
  await page.goto(`/client/${w.id}`);
  await expect(page.getByRole("article")).toHaveCount(6);
  await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
  const box = page.getByRole("searchbox", { name: "Search words" });
  await box.fill("aisle");
  await box.press("Enter");
  await expect(page).toHaveURL(/\/client\/\d+\?q=aisle$/);
  await expect(page.getByRole("article")).toHaveCount(3);
  await expect(page.getByText("3 / 3 images")).toBeVisible();
  for (const t of await titles(page)) expect(t).toMatch(/Workshop [246]/);
  if (hasJs(info)) {
    // Updated in place: the same document, the focus still in the box.
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
    await expect(box).toBeFocused();
  }
  await expectAccessible(page, info);

  // The last word as a prefix, case and accents folded, a phrase in quotes.
  await box.fill("WÓRKSH");
  await box.press("Enter");
  await expect(page.getByText("6 / 6 images")).toBeVisible();
  await box.fill('"image 5"');
  await box.press("Enter");
  await expect(page.getByRole("article")).toHaveCount(1);
  await expect(page.getByRole("article")).toContainText("Workshop 5");
  // Query syntax is text, never an error page.
  await box.fill('aisle" OR NEAR(shelf *');
  await box.press("Enter");
  await expect(page.getByText("No related images found")).toBeVisible();

  // This project has no attribute values.
  await expect(page.getByText("No filters found")).toBeVisible();

  await page.getByRole("link", { name: "Clear search" }).click();
  await expect(page).toHaveURL(new RegExp(`/client/${w.id}$`));
  await expect(page.getByText("6 / 6 images")).toBeVisible();
  await expect(box).toHaveValue("");

  // A board's search stays inside the board.
  await page.goto(w.path("Alpha"));
  await page.getByRole("searchbox", { name: "Search words" }).fill("aisle");
  await page.getByRole("search", { name: "Keyword search" }).getByRole("button", { name: "GO" }).click();
  await expect(page.getByRole("article")).toHaveCount(1);
  await expect(page.getByRole("article")).toContainText("Workshop 2");
});

test("select all on a searched grid, then a bulk action: it changes exactly the images found", async ({ page, signIn, db }, info) => {
  await signIn("searchBulk");
  const w = await workshop(db, "searchBulk", info);
  await page.goto(`/client/${w.id}?q=shelf`);
  await expect(page.getByRole("article")).toHaveCount(3);
  await page.getByRole("button", { name: "Select all" }).click();
  await expect(page.getByText("3 selected")).toBeVisible();
  await bulk(page, info, "Add keyword");
  await page.getByRole("textbox", { name: "Keywords" }).fill("found");
  await page.getByRole("button", { name: "Add to 3 images" }).click();
  await expect(toast(page)).toContainText("Keywords added to 3 images");
  await expect(page).toHaveURL(/\?q=shelf$/); // back on the searched grid
  const rows = await db.selectFrom("images").select(["title", "keywords"]).where("project_id", "=", w.id).execute();
  for (const r of rows) expect(JSON.parse(r.keywords).includes("found"), r.title).toBe(JSON.parse(r.keywords).includes("shelf"));
  // The whole project's selection was never touched: without the search nothing is selected.
  await page.goto(`/client/${w.id}`);
  await expect(page.getByRole("button", { name: "Select all" })).toBeVisible();
});

test("search across projects from the header: the progress screen while it runs, then Related Images with the illustration and a project facet @core", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("searchAll");
  const own = await projectId(db, boardsProject("searchAll", info.project.name));
  const second = await projectId(db, secondProject(info.project.name));
  await page.goto("/dashboard");
  if (hasJs(info))
    // A slow search, so the progress screen has something to wait for (it shows only while the result loads).
    await page.route(/\/result\/keyword\/[^?]*\.data/, async (route) => {
      await new Promise((r) => setTimeout(r, 2500));
      await route.continue();
    });
  const box = page.getByRole("searchbox", { name: "Search all projects" });
  await box.fill("aisle");
  await box.press("Enter");
  if (hasJs(info)) await expect(page.getByText(/^(Thinking|Searching)…$/)).toBeVisible();
  await expect(page).toHaveURL(/\/result\/keyword\/aisle$/);
  await expect(page.getByRole("heading", { name: "Related Images" })).toBeVisible();
  await expect(page.getByText(/^(Thinking|Searching|Compiling)…$/)).toHaveCount(0);
  await expect(page.getByRole("img", { name: "A koala with a magnifying glass" })).toBeVisible();
  await expect(page.getByRole("article")).toHaveCount(4);
  const facet = page.getByRole("navigation", { name: "Projects with results" });
  await expect(facet.getByRole("link", { name: `${boardsProject("searchAll", info.project.name)} (3)` })).toHaveAttribute(
    "href",
    `/client/${own}?q=aisle`,
  );
  await expect(facet.getByRole("link", { name: `${secondProject(info.project.name)} (1)` })).toHaveAttribute(
    "href",
    `/client/${second}?q=aisle`,
  );
  await expectAccessible(page, info, ["heading-order"]);
  await facet.getByRole("link", { name: /\(3\)$/ }).click();
  await expect(page).toHaveURL(new RegExp(`/client/${own}\\?q=aisle$`));
  await expect(page.getByRole("article")).toHaveCount(3);

  await page.unrouteAll();
  await page.goto("/search/keyword/nothing%20like%20this");
  await expect(page).toHaveURL(/\/result\/keyword\/nothing%20like%20this$/);
  await expect(page.getByText("No related images found:")).toBeVisible();
  const unknown = await page.goto("/search/fuzzy/cola");
  expect(unknown?.status()).toBe(404);
});

test("smart search: a phrase becomes the project's tags, shown and edited as chips (a text field without JavaScript), most tags first; across projects too @core", async ({
  page,
  signIn,
  db,
}, info) => {
  // searchSmart's workshop (users.ts SMART_KEYWORDS): 1 soda + grocery aisle, 2 soda, 3 chocolate, 4 grocery aisle.
  await signIn("searchSmart");
  const w = await workshop(db, "searchSmart", info);
  await page.goto(`/client/${w.id}`);
  const phrase = page.getByRole("searchbox", { name: "Describe the images you are looking for" });
  // Every word of this phrase is a tag or a small word, so the answer is exact (the quality test covers the rest).
  await phrase.fill("sodas in the grocery aisles");
  await phrase.press("Enter");
  await expect(page).toHaveURL(/[?&]smart=sodas\+in\+the\+grocery\+aisles/);
  await expect(page.getByRole("status").filter({ hasText: "Images tagged" })).toContainText("“soda”");
  await expect(page.getByRole("status").filter({ hasText: "Images tagged" })).toContainText("“grocery aisle”");
  await expect(page.getByText("3 / 3 images")).toBeVisible();
  // Ranked by tags held: the image with both first, whatever its age.
  await expect(page.getByRole("article").first()).toContainText("Workshop 1");
  expect((await titles(page)).slice(1).sort()).toEqual([expect.stringContaining("Workshop 2"), expect.stringContaining("Workshop 4")]);
  await expectAccessible(page, info);

  // Remove "grocery aisle", then add "chocolate".
  if (hasJs(info)) {
    await expect(page.getByRole("list", { name: "Tags searched by" }).getByRole("listitem")).toHaveCount(2);
    // By keyboard: Enter on a chip's ×, and the focus lands in the box that adds one (the chip is gone).
    await page.getByRole("button", { name: "Remove tag grocery aisle" }).focus();
    await page.keyboard.press("Enter");
    await expect(page.getByRole("textbox", { name: "Add a tag" })).toBeFocused();
  } else {
    const field = page.getByRole("textbox", { name: "Tags (comma-separated)" });
    await expect(field).toHaveValue("soda, grocery aisle");
    await field.fill("soda");
    await page.getByRole("button", { name: "Search by tags" }).click();
  }
  await expect(page).toHaveURL(/[?&]tags=soda(&|$)/);
  await expect(page.getByText("2 / 2 images")).toBeVisible();
  await expect(page.getByText("Showing images with the tags as you edited them")).toBeVisible();
  if (hasJs(info)) {
    await page.keyboard.type("chocolate");
    await page.keyboard.press("Enter");
    await expect(page.getByRole("textbox", { name: "Add a tag" })).toBeFocused();
  } else {
    await page.getByRole("textbox", { name: "Tags (comma-separated)" }).fill("soda, chocolate");
    await page.getByRole("button", { name: "Search by tags" }).click();
  }
  await expect(page).toHaveURL(/[?&]tags=soda%2C\+?chocolate(&|$)/);
  await expect(page.getByText("3 / 3 images")).toBeVisible();
  for (const t of await titles(page)) expect(t).toMatch(/Workshop [123]/);

  // The keyword search narrows the smart result further; Clear smart search leaves the keyword search.
  await page.getByRole("searchbox", { name: "Search words" }).fill("shelf");
  await page.getByRole("searchbox", { name: "Search words" }).press("Enter");
  await expect(page.getByText("2 / 2 images")).toBeVisible();
  await page.getByRole("link", { name: "Clear smart search" }).click();
  await expect(page).toHaveURL(new RegExp(`/client/${w.id}\\?q=shelf$`));
  await expect(page.getByText("3 / 3 images")).toBeVisible();

  // Across projects from the header, with the koala saying what it understood.
  await page.getByRole("combobox", { name: "Search type" }).selectOption("smart");
  await page.getByRole("searchbox", { name: "Search all projects" }).fill("some chocolate");
  await page.getByRole("searchbox", { name: "Search all projects" }).press("Enter");
  await expect(page).toHaveURL(/\/result\/smart\/some%20chocolate$/);
  await expect(page.getByRole("heading", { name: "Related Images" })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "Images tagged" })).toContainText("“chocolate”");
  await expect(page.getByRole("article")).toHaveCount(1);
  await expect(page.getByRole("article")).toContainText("Workshop 3");
  await expect(page.getByRole("img", { name: "A koala with a magnifying glass" })).toBeVisible();
  await expectAccessible(page, info, ["heading-order"]);
});

test("a shared board's visitor searches the board only; a link without metadata offers no search", async ({
  signIn,
  db,
  browser,
  server,
}, info) => {
  const me = await signIn("searchShared");
  const w = await workshop(db, "searchShared", info);
  const open = await shareLinkTo(db, me.email, w.board("Alpha"), { expiry: "30", allowDownload: true, showMetadata: true }, "search e2e");
  const bare = await shareLinkTo(db, me.email, w.board("Alpha"), { expiry: "30", allowDownload: true, showMetadata: false }, "bare e2e");

  const guest = await visitor(browser, info, server.baseURL);
  try {
    const g = guest.page;
    await g.goto(open);
    await expect(g.getByRole("article")).toHaveCount(3);
    const box = g.getByRole("searchbox", { name: "Search words" });
    await box.fill("shelf");
    await box.press("Enter");
    await expect(g.getByRole("article")).toHaveCount(2); // Workshop 1 and 3 (5 is not on the board)
    await expect(g.getByRole("button", { name: "Download all 2 images (ZIP)" })).toBeVisible();
    await expectAccessible(g, info);
    await g.goto(`${bare}?q=shelf&f=1:x`);
    await expect(g.getByRole("searchbox")).toHaveCount(0);
    await expect(g.getByRole("article")).toHaveCount(3); // the query is ignored: no probing hidden keywords
  } finally {
    await guest.close();
  }
});

test("keyboard only: from the page's start to the sidebar's search box, search, and reach the results", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("searchKeys");
  const w = await workshop(db, "searchKeys", info);
  await page.goto(`/client/${w.id}`);
  await expect(page.getByRole("article")).toHaveCount(6);
  const box = page.getByRole("searchbox", { name: "Search words" });
  await tabTo(page, box);
  await page.keyboard.type("aisle");
  await page.keyboard.press("Enter");
  await expect(page.getByText("3 / 3 images")).toBeVisible();
  await tabTo(page, page.getByRole("link", { name: "Clear search" }));
  await page.keyboard.press("Enter");
  await expect(page.getByText("6 / 6 images")).toBeVisible();
});

/** How many workshop images the MIX rule gives, computed from the seed's table (users.ts), not by the app. */
function mix(chosen: Partial<Record<keyof typeof WORKSHOP_ATTRIBUTES, string[]>>, except?: keyof typeof WORKSHOP_ATTRIBUTES) {
  return [0, 1, 2, 3, 4, 5].filter((i) =>
    (Object.entries(chosen) as [keyof typeof WORKSHOP_ATTRIBUTES, string[]][]).every(
      ([attribute, values]) => attribute === except || values.includes(WORKSHOP_ATTRIBUTES[attribute][i] ?? ""),
    ),
  );
}
const countOf = (chosen: Parameters<typeof mix>[0], attribute: keyof typeof WORKSHOP_ATTRIBUTES, value: string) =>
  mix(chosen, attribute).filter((i) => WORKSHOP_ATTRIBUTES[attribute][i] === value).length;

test("attribute filters: two values of one attribute and one of another, counts by the MIX rule, Clear Filter @core", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("searchFilters");
  const w = await workshop(db, "searchFilters", info);
  await page.goto(`/client/${w.id}`);
  const filters = page.getByRole("region", { name: "Attributes" });
  const box = (attribute: string, value: string) =>
    filters.getByRole("group", { name: attribute }).getByRole("checkbox", { name: new RegExp(`^${value} \\(\\d+\\)$`) });
  const apply = async () => {
    if (!hasJs(info)) await filters.getByRole("button", { name: "Apply filters" }).click();
  };
  const expectCounts = async (chosen: Parameters<typeof mix>[0]) => {
    for (const [attribute, values] of Object.entries(WORKSHOP_ATTRIBUTES) as [
      keyof typeof WORKSHOP_ATTRIBUTES,
      readonly (string | null)[],
    ][])
      for (const value of new Set(values.filter((v): v is string => v !== null)))
        await expect(box(attribute, value), `${attribute} ${value}`).toHaveAccessibleName(
          `${value} (${countOf(chosen, attribute, value)})`,
        );
    await expect(page.getByText(`${mix(chosen).length} / ${mix(chosen).length} images`)).toBeVisible();
  };
  await expectCounts({});
  await expectAccessible(page, info);

  await box("Channel", "Online").check();
  await apply();
  await expect(page).toHaveURL(/f=/);
  await box("Channel", "Store").check();
  await apply();
  await expectCounts({ Channel: ["Online", "Store"] });
  await box("Region", "North").check();
  await apply();
  await expectCounts({ Channel: ["Online", "Store"], Region: ["North"] });
  await expect(page.getByRole("article")).toHaveCount(2);
  // Select all takes the filtered set.
  await page.getByRole("button", { name: "Select all" }).click();
  await expect(page.getByText("2 selected")).toBeVisible();
  await page.getByRole("button", { name: "Deselect all" }).click();

  await filters.getByRole("link", { name: "Clear Filter" }).click();
  await expectCounts({});
  await expect(box("Channel", "Online")).not.toBeChecked();
});

test(
  "with JavaScript a tick puts only the chosen values in the address, not an empty 'start typing...' box",
  { tag: "@js-only" },
  async ({ page, signIn, db }, info) => {
    await signIn("look");
    await page.goto(`/client/${await projectId(db, longListProject(info.project.name, "look"))}`);
    const group = page.getByRole("group", { name: "Store" });
    await expect(group.locator(".facet-virtual")).toBeVisible();
    await group.getByRole("checkbox", { name: /^Store 01/ }).check();
    await expect(page).toHaveURL(/f=/);
    await expect(page.getByRole("article")).toHaveCount(1);
    expect(new Set(new URL(page.url()).searchParams.keys())).toEqual(new Set(["f"]));
    // A word typed in the box is the list's state, and rides along with the next tick.
    await group.getByRole("searchbox", { name: "Find a Store value" }).fill("1");
    await group.getByRole("checkbox", { name: /^Store 13/ }).check();
    await expect(page.getByRole("article")).toHaveCount(2);
    const params = new URL(page.url()).searchParams;
    expect([...params.keys()].filter((k) => k !== "f")).toEqual([expect.stringMatching(/^v\d+$/)]);
    expect([...params.entries()].find(([k]) => k.startsWith("v"))?.[1]).toBe("1");
  },
);

test("a list of 30 values or more gets a 'start typing...' box that narrows it (a GET field without JavaScript) and, with JavaScript, a virtual list", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("searchFilters");
  await page.goto(`/client/${await projectId(db, longListProject(info.project.name))}`);
  const group = page.getByRole("group", { name: "Store" });
  // With JavaScript the server's list gives way to the virtual one once the page is hydrated: measure that one.
  const list = group.locator(hasJs(info) ? ".facet-virtual" : ".facet-values-long");
  await expect(list).toBeVisible();
  const size = await list.boundingBox();
  expect(size!.height).toBeLessThanOrEqual(200);
  expect(size!.width).toBeLessThanOrEqual(400);
  if (hasJs(info)) {
    // Only the rows in view (and a few around them) are in the page.
    await expect(group.getByRole("checkbox", { name: /^Store 01/ })).toBeVisible();
    expect(await group.getByRole("checkbox").count()).toBeLessThan(32);
    await expect(group.getByRole("checkbox", { name: /^Store 32/ })).toHaveCount(0);
  } else await expect(group.getByRole("checkbox")).toHaveCount(32);
  await group.getByRole("searchbox", { name: "Find a Store value" }).fill("1");
  if (!hasJs(info)) await page.getByRole("button", { name: "Apply filters" }).click();
  // Store 01, 10-19, 21, 31
  if (!hasJs(info)) await expect(group.getByRole("checkbox")).toHaveCount(13);
  await expect(group.getByRole("checkbox", { name: /^Store 02/ })).toHaveCount(0);
  await group.getByRole("checkbox", { name: /^Store 13/ }).check();
  if (!hasJs(info)) await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.getByRole("article")).toHaveCount(1);
  await expect(page.getByRole("article")).toContainText("Store photo 13");
  if (!hasJs(info)) return;
  // A choice scrolled out of view still counts: Store 13 and, from the list's far end, Store 32 (OR).
  await group.getByRole("searchbox", { name: "Find a Store value" }).fill("");
  await list.evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await expect(group.getByRole("checkbox", { name: /^Store 13/ })).toHaveCount(0);
  await group.getByRole("checkbox", { name: /^Store 32/ }).check();
  await expect(page.getByRole("article")).toHaveCount(2);
  await expect(page).toHaveURL(/f=\d+%3AStore\+13&f=\d+%3AStore\+32|f=\d+%3AStore\+32&f=\d+%3AStore\+13/);
  // And an untick drops just that one.
  await list.evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await group.getByRole("checkbox", { name: /^Store 32/ }).uncheck();
  await expect(page.getByRole("article")).toHaveCount(1);
  await expect(page.getByRole("article")).toContainText("Store photo 13");
});

test("an open grid offers 'New Filters Loaded' when a value to filter by appears (JavaScript); without it the next load shows it", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("searchFresh");
  const w = await workshop(db, "searchFresh", info);
  await page.goto(`/client/${w.id}`);
  const filters = page.getByRole("group", { name: "Channel" });
  await expect(filters.getByRole("checkbox")).toHaveCount(3); // Kiosk, Online, Store
  await expect(filters.getByText("Vending")).toHaveCount(0);
  // Another tab gives image 6 a new Channel value through the image panel's Assign.
  const addVending = async () => {
    const channel = await db
      .selectFrom("attributes")
      .select("id")
      .where("project_id", "=", w.id)
      .where("name", "=", "Channel")
      .executeTakeFirstOrThrow();
    const image = await db
      .selectFrom("images")
      .select("id")
      .where("project_id", "=", w.id)
      .where("title", "=", "Workshop 6")
      .executeTakeFirstOrThrow();
    const res = await page.request.post(`/image/${image.id}/attributes`, {
      form: { attribute: String(channel.id), value: "Vending" },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(302);
  };
  if (!hasJs(info)) {
    await addVending();
    await page.reload();
    await expect(filters.getByRole("checkbox")).toHaveCount(4);
    await expect(filters.getByText("Vending (1)")).toBeVisible();
    return;
  }
  const offer = page.getByRole("status").filter({ hasText: "New Filters Loaded" });
  // The check runs once the page is hydrated: ask (tab visible again) until one has been answered.
  const check = () =>
    expect(async () => {
      await Promise.all([
        page.waitForResponse((r) => r.url().includes("check=version"), { timeout: 2_000 }),
        page.evaluate(() => document.dispatchEvent(new Event("visibilitychange"))),
      ]);
    }).toPass();
  // Nothing changed yet: no offer.
  await check();
  await expect(offer).toHaveCount(0);
  await addVending();
  await check();
  await expect(offer).toBeVisible();
  await expect(filters.getByText("Vending")).toHaveCount(0); // the page stays as it was until asked
  await offer.getByRole("button", { name: "Update Now" }).click();
  await expect(filters.getByText("Vending (1)")).toBeVisible();
  await expect(offer).toHaveCount(0);
});
