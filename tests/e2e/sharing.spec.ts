import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { expectAccessible, tabTo, visitor, waitForMail, workshop } from "./support";

/** A raw mail with its quoted-printable parts decoded (soft breaks joined, =XX bytes read as UTF-8). */
const decoded = (raw: string) =>
  Buffer.from(
    raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    "latin1",
  ).toString("utf8");

/** The share link in a mail, as a path. */
function sharedLinkIn(raw: string): string {
  const text = decoded(raw);
  const m = /https?:\/\/[^\s"<>]+(\/shared-board\/[A-Za-z0-9_-]+:[A-Za-z0-9_-]{40,})/.exec(text);
  if (!m) throw new Error("No share link in the mail");
  return m[1]!;
}

const toast = (page: Page) => page.getByRole("status").filter({ has: page.locator(".toast") });

test("share a board by e-mail: the recipient opens the mailed link without an account, browses, downloads and reviews; the team sees it @core", async ({
  page,
  signIn,
  db,
  browser,
  server,
}, info) => {
  await signIn("share");
  const w = await workshop(db, "share", info);
  await page.goto(w.path("Alpha"));
  await page.getByRole("banner").getByRole("link", { name: "Share board" }).click();
  await expect(page.getByRole("heading", { name: "Share “Alpha”" })).toBeVisible();
  await expectAccessible(page, info);

  const emails = page.getByLabel("E-mail addresses");
  const share = page.getByRole("button", { name: "Share", exact: true });
  await emails.fill(" , ");
  await share.click();
  await expect(page.getByText("You need to write something!")).toBeVisible();
  const recipient = `client-${info.project.name}@client.test`;
  await emails.fill(`${recipient}, not-an-address`);
  await share.click();
  await expect(page.getByText("Please enter a valid email address! “not-an-address” is not one.")).toBeVisible();
  const since = Date.now() - 1;
  await emails.fill(recipient);
  await share.click();
  await expect(toast(page)).toContainText("Board shared with 1 person");
  await expect(page.getByRole("rowheader", { name: recipient })).toBeVisible();

  const mail = await waitForMail(recipient, since);
  expect(decoded(mail)).toContain("E2E share shared the board “Alpha” with you on Koala.");
  expect(decoded(mail)).toMatch(/The link works until \d{1,2} \w+ \d{4}\./);
  const link = sharedLinkIn(mail);

  const guest = await visitor(browser, info, server.baseURL);
  try {
    const g = guest.page;
    const opened = await g.goto(link);
    expect(opened!.status()).toBe(200);
    expect(opened!.headers()["referrer-policy"]).toBe("no-referrer");
    await expect(g.getByRole("heading", { name: "Alpha", level: 1 })).toBeVisible();
    await expect(g.getByRole("article")).toHaveCount(3);
    await expect(g.getByRole("link", { name: /dashboard/i })).toHaveCount(0);
    await expect(g.getByRole("checkbox")).toHaveCount(0);
    await expectAccessible(g, info);

    const download = g.waitForEvent("download");
    await g.getByRole("button", { name: "Download all 3 images (ZIP)" }).click();
    expect((await download).suggestedFilename()).toBe("Alpha.zip");

    await g.getByRole("link", { name: "View Workshop 1" }).click();
    await expect(g.getByRole("heading", { name: "Workshop 1" })).toBeVisible();
    await expectAccessible(g, info);
    await g.getByLabel("Your name").fill("Dana Client");
    await g.getByRole("button", { name: "Continue" }).click();
    await expect(g.getByText("Reviewing as Dana Client.")).toBeVisible();
    await g.getByLabel("Comment (optional)").fill("Lovely <b>shelf</b>, keep it");
    await g.getByRole("button", { name: "Approve" }).click();
    await expect(g.getByText("Review saved: Approved")).toBeVisible();
    await g.getByRole("link", { name: "← All images" }).click();
    await expect(g.locator(".review-approved")).toHaveCount(1);
  } finally {
    await guest.close();
  }

  // The team: the filter on the board, the review in the image panel.
  await page.goto(w.path("Alpha"));
  const reviews = page.getByRole("navigation", { name: "Client reviews" });
  await reviews.getByRole("link", { name: "Approved (1)" }).click();
  await expect(page).toHaveURL(/\?review=approved$/);
  await expect(page.getByRole("article")).toHaveCount(1);
  await expect(page.getByRole("article", { name: "Workshop 1" })).toBeVisible();
  const imageId = (
    await db.selectFrom("images").select("id").where("title", "=", "Workshop 1").where("project_id", "=", w.id).executeTakeFirstOrThrow()
  ).id;
  await page.goto(`/image/${imageId}?board=${w.board("Alpha")}`);
  await expect(page.getByRole("heading", { name: "Client reviews" })).toBeVisible();
  await expect(page.getByText("Dana Client")).toBeVisible();
  await expect(page.getByText("Lovely <b>shelf</b>, keep it")).toBeVisible();
  await page.goto(`/${w.id}/board/${w.board("Alpha")}/share`);
  await expect(page.getByRole("row", { name: new RegExp(recipient) })).toContainText("1");
});

test("a link to paste without downloads offers none; revoked, it stops at once with its thumbnails; expired, it says so", async ({
  page,
  signIn,
  db,
  browser,
  server,
}, info) => {
  await signIn("shareRevoke");
  const w = await workshop(db, "shareRevoke", info);
  await page.goto(`${w.path("Alpha")}/share`);
  await page.getByLabel("What the link is for").fill("Q3 report");
  const pasteForm = page.locator("form").filter({ has: page.getByRole("button", { name: "Create a link" }) });
  await pasteForm.getByLabel("Allow downloads").uncheck();
  await page.getByRole("button", { name: "Create a link" }).click();
  const made = page.getByLabel(/Link for “Q3 report”/);
  await expect(made).toBeVisible();
  const link = new URL(await made.inputValue()).pathname;

  const guest = await visitor(browser, info, server.baseURL);
  try {
    const g = guest.page;
    await g.goto(link);
    await expect(g.getByRole("article")).toHaveCount(3);
    await expect(g.getByRole("button", { name: /Download/ })).toHaveCount(0);
    const thumb = await g.locator("article img").first().getAttribute("src");
    expect((await g.request.get(thumb!)).status()).toBe(200);
    await g.getByRole("link", { name: "View Workshop 2" }).click();
    await expect(g.getByRole("heading", { name: "Workshop 2" })).toBeVisible();
    await expect(g.getByRole("link", { name: "Download" })).toHaveCount(0);

    await page.getByRole("button", { name: "Revoke the link for Q3 report" }).click();
    await expect(toast(page)).toContainText("Link revoked");
    const again = await g.goto(link);
    expect(again!.status()).toBe(410);
    await expect(g.getByRole("heading", { name: "This link was revoked" })).toBeVisible();
    expect((await g.request.get(thumb!)).status()).toBe(404);

    // Expiry: a second link, its time run out (test-only time travel).
    await page.getByLabel("What the link is for").fill("Short-lived");
    await page.getByRole("button", { name: "Create a link" }).click();
    const second = new URL(await page.getByLabel(/Link for “Short-lived”/).inputValue()).pathname;
    await db
      .updateTable("share_links")
      .set({ expires_at: Date.now() - 1 })
      .where("label", "=", "Short-lived")
      .where("board_id", "=", w.board("Alpha"))
      .execute();
    const expired = await g.goto(second);
    expect(expired!.status()).toBe(410);
    await expect(g.getByRole("heading", { name: "This link has expired" })).toBeVisible();
    await expectAccessible(g, info);
    const invalid = await g.goto(`/shared-board/${w.board("Alpha")}:not-a-real-token-at-all-000000000000`);
    expect(invalid!.status()).toBe(404);
    await expect(g.getByRole("heading", { name: "Invalid URL" })).toBeVisible();
  } finally {
    await guest.close();
  }
});

test("keyboard only: from the board's Share icon to a link to paste", async ({ page, signIn, db }, info) => {
  await signIn("shareRevoke");
  const w = await workshop(db, "shareRevoke", info);
  await page.goto(w.path("Beta"));
  await tabTo(page, page.getByRole("banner").getByRole("link", { name: "Share board" }));
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "Share “Beta”" })).toBeVisible();
  await tabTo(page, page.getByLabel("What the link is for"), 40);
  await page.keyboard.type("Keyboard report");
  await tabTo(page, page.getByRole("button", { name: "Create a link" }));
  await page.keyboard.press("Enter");
  await expect(page.getByLabel(/Link for “Keyboard report”/)).toHaveValue(/\/shared-board\/[\w-]+:[\w-]{43}$/);
});
