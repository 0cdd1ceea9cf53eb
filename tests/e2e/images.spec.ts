import { existsSync } from "node:fs";
import path from "node:path";
import type { FileChooser } from "@playwright/test";
import { expect, test } from "./fixtures";
import { expectAccessible, firstImage, hasJs, imagesIn, jpegFile, ownProject, projectId, toast, userFor } from "./support";
import { uploadProject } from "./users";

test("upload one image, fix a bad keyword, submit it with its details", { tag: "@core" }, async ({ page, signIn, db }, info) => {
  await signIn("uploadOne");
  const id = await ownProject(db, "uploadOne", info);
  await page.goto(`/upload/${id}`);
  await expectAccessible(page, info);

  await page.getByLabel("Images to upload", { exact: true }).setInputFiles(await jpegFile("Aisle in Leeds.jpg", "#cc6633"));
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Edit Image" })).toBeVisible();
  await expect(page).toHaveURL(/view=edit/);
  await expect(page.getByLabel("Title", { exact: true })).toHaveValue("Aisle in Leeds");
  await expectAccessible(page, info);

  await page.getByLabel("Keywords", { exact: true }).fill("aisle, x, promo");
  await page.getByRole("button", { name: "Submit" }).click();
  await expect(page.getByText('Keyword "x" should be at least 2 characters long')).toBeVisible();
  await page.getByLabel("Keywords", { exact: true }).fill("aisle, end cap, promo$");
  await page.getByRole("button", { name: "Submit" }).click();
  await expect(page.getByText("Keyword should not contain any special characters")).toBeVisible();
  await page.getByLabel("Keywords", { exact: true }).fill("aisle, end of aisle display");
  await page.getByRole("button", { name: "Submit" }).click();
  await expect(page.getByText('Keyword "end of aisle displa.." should be less than 20 characters')).toBeVisible();
  await page.getByLabel("Keywords", { exact: true }).fill("aisle, end cap, promo");
  await page.getByLabel("Description", { exact: true }).fill("End of aisle display");
  await page.getByRole("button", { name: "Submit" }).click();

  // A single upload returns to the upload view.
  await expect(page).toHaveURL(new RegExp(`/upload/${id}$`));
  await expect(page.getByText("Image submitted")).toBeVisible();
  const row = await db
    .selectFrom("images")
    .select(["title", "keywords", "description", "version"])
    .where("project_id", "=", id)
    .where("original_name", "=", "Aisle in Leeds.jpg")
    .executeTakeFirstOrThrow();
  expect(row).toMatchObject({ title: "Aisle in Leeds", description: "End of aisle display", version: 2 });
  expect(JSON.parse(row.keywords)).toEqual(["aisle", "end cap", "promo"]);
});

test("upload several images, edit one, submit the rest without editing (the dashboard says so)", async ({ page, signIn, db }, info) => {
  await signIn("uploadMany");
  const id = await ownProject(db, "uploadMany", info);
  const before = await imagesIn(db, id);
  await page.goto(`/upload/${id}`);
  await page
    .getByLabel("Images to upload", { exact: true })
    .setInputFiles([await jpegFile("one.jpg", "#112233"), await jpegFile("two.jpg", "#445566"), await jpegFile("three.jpg", "#778899")]);
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Multiple Uploaded Images" })).toBeVisible();
  await expect(page.locator(".uploaded-list").getByRole("link")).toHaveCount(3);
  expect(await imagesIn(db, id)).toBe(before + 3);
  await expectAccessible(page, info);

  await page.getByRole("link", { name: "Edit two" }).click();
  await expect(page.getByRole("heading", { name: "Edit Image" })).toBeVisible();
  await expect(page.getByText("Image 2 of 3 uploaded")).toBeVisible();
  await page.getByLabel("Title", { exact: true }).fill("Second shelf");
  await page.getByRole("button", { name: "Submit" }).click();

  // Several uploads return to the multiple view, without the submitted image.
  await expect(page.getByRole("heading", { name: "Multiple Uploaded Images" })).toBeVisible();
  await expect(page.locator(".uploaded-list").getByRole("link")).toHaveCount(2);
  await expect(page.getByRole("link", { name: "Edit two" })).toHaveCount(0);
  await page.getByRole("button", { name: "Submit without editing" }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
  await expect(toast(page)).toContainText("All images submitted");
  await expect(toast(page)).toContainText(`2 images added to ${uploadProject("uploadMany", info.project.name)} without editing.`);
  const titles = await db.selectFrom("images").select("title").where("project_id", "=", id).execute();
  expect(titles.filter((r) => r.title === "Second shelf")).toHaveLength(1);
});

test("a bad file stops with a clear message and leaves the good ones going", async ({ page, signIn, db, server }, info) => {
  await signIn("uploadBad");
  const id = await ownProject(db, "uploadBad", info);
  const before = await imagesIn(db, id);
  let dialogs = 0;
  page.on("dialog", (d) => {
    dialogs += 1;
    void d.dismiss();
  });
  await page.goto(`/upload/${id}`);
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByText("Choose at least one image to upload.")).toBeVisible();
  const good = await jpegFile('"><img src=x onerror=alert(1)>.jpg', "#228844");
  const svg = {
    name: "drawing.jpg",
    mimeType: "image/jpeg",
    buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
  };
  const truncated = { name: "cut.jpg", mimeType: "image/jpeg", buffer: (await jpegFile("x.jpg", "#884422")).buffer.subarray(0, 1200) };
  await page.getByLabel("Images to upload", { exact: true }).setInputFiles([good, svg, truncated]);
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByText("1 of 3 uploaded")).toBeVisible();
  // Each refusal says what is wrong with the file itself; no Retry, which could never help.
  await expect(page.getByText(/^The file is not a supported image/)).toBeVisible();
  await expect(page.getByText(/^The image could not be read/)).toBeVisible();
  await expect(page.getByText(/Internal server error|Failed to upload image to s3/)).toHaveCount(0);
  expect(await imagesIn(db, id)).toBe(before + 1);
  await expect(page.getByRole("button", { name: "Retry" })).toHaveCount(0);
  await page.getByRole("link", { name: "Continue with 1 uploaded image" }).click();
  await expect(page.getByRole("heading", { name: "Edit Image" })).toBeVisible();
  // The hostile name is kept as text, never markup.
  await expect(page.getByLabel("Title", { exact: true })).toHaveValue('"><img src=x onerror=alert(1)>');
  expect(dialogs).toBe(0);
  // The refused files' bytes are gone from storage at once (their records wait for the sweep).
  const refused = await db
    .selectFrom("pending_uploads")
    .innerJoin("users", "users.id", "pending_uploads.user_id")
    .select("pending_uploads.key")
    .where("users.email", "=", userFor(info, "uploadBad"))
    .where("pending_uploads.image_id", "is", null)
    .execute();
  expect(refused).toHaveLength(2);
  for (const { key } of refused) expect(existsSync(path.join(server.dataDir, "objects", key))).toBe(false);
});

test(
  "edit metadata in the image panel; the version slider shows the history and the old-version banner",
  { tag: "@core" },
  async ({ page, signIn, db }, info) => {
    await signIn("editMeta");
    const id = await firstImage(db, await ownProject(db, "editMeta", info));
    await page.goto(`/image/${id}`);
    await page.getByRole("link", { name: "Edit", exact: true }).click();
    await expect(page.getByRole("heading", { name: "Edit image" })).toBeVisible();
    await expectAccessible(page, info);
    // Cancel changes nothing.
    await page.getByLabel("Title", { exact: true }).fill("Not kept");
    await page.getByRole("link", { name: "Cancel" }).click();
    await expect(page.getByRole("heading", { name: "Seeded image" })).toBeVisible();

    await page.getByRole("link", { name: "Edit", exact: true }).click();
    await page.getByLabel("Title", { exact: true }).fill("Chilled aisle");
    await page.getByLabel("Keywords", { exact: true }).fill("seeded, shelf, chilled");
    await page.getByLabel("OCR text", { exact: true }).fill("SALE 2 FOR 1");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("Image saved")).toBeVisible();
    await expect(page.getByRole("heading", { name: "Chilled aisle" })).toBeVisible();
    await expect(page.getByText("SALE 2 FOR 1")).toBeVisible();

    // Saving the same values again makes no version.
    await page.getByRole("link", { name: "Edit", exact: true }).click();
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("No changes made")).toBeVisible();

    await expect(page.getByText(/Version 2 of 2 .* title, keywords, OCR text/)).toBeVisible();
    const slider = page.getByLabel(/Version 2 of 2/);
    await slider.fill("1");
    if (!hasJs(info)) await page.getByRole("button", { name: "Show version" }).click();
    await expect(page.getByText("An Old Version of the image is being displayed")).toBeVisible();
    await expect(page.getByRole("heading", { name: "Seeded image" })).toBeVisible();
    await page.getByRole("link", { name: "Back to latest version" }).click();
    await expect(page.getByRole("heading", { name: "Chilled aisle" })).toBeVisible();
    await expect(page.getByText("An Old Version of the image is being displayed")).toHaveCount(0);
  },
);

test("rotate in 90° steps and save: new derivatives, the original kept", async ({ page, signIn, db }, info) => {
  await signIn("rotate");
  const id = await firstImage(db, await ownProject(db, "rotate", info));
  const keys = () =>
    db.selectFrom("images").select(["storage_key", "thumb_key", "rotation", "version"]).where("id", "=", id).executeTakeFirstOrThrow();
  const before = await keys();
  await page.goto(`/image/${id}?edit`);
  await page.getByLabel("Title", { exact: true }).fill("Turned around");
  await page.getByRole("button", { name: "Rotate 90°" }).click();
  await expect(page.getByText("Turned 90° clockwise")).toBeVisible();
  await page.getByRole("button", { name: "Rotate 90°" }).click();
  await expect(page.getByText("Turned 180° clockwise")).toBeVisible();
  // The typed title survives the turn (without JavaScript the form went to the server and back).
  await expect(page.getByLabel("Title", { exact: true })).toHaveValue("Turned around");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Image saved")).toBeVisible();
  const after = await keys();
  expect(after).toMatchObject({ storage_key: before.storage_key, rotation: 180, version: 2 });
  expect(after.thumb_key).not.toBe(before.thumb_key);
  await expect(page.getByText(/rotated to 180°/)).toBeVisible();
  const thumb = await page.request.get(`/media/${id}/${after.thumb_key.replaceAll("/", "~")}`);
  expect(thumb.status()).toBe(200);
});

test("delete an image: two confirmations, the second typing DELETE", { tag: "@core" }, async ({ page, signIn, db }, info) => {
  await signIn("deleteImg");
  const project = await ownProject(db, "deleteImg", info);
  const id = await firstImage(db, project);
  // From the project grid: the card's Delete leads to the same confirmation as the panel's.
  await page.goto(`/client/${project}`);
  await page.getByRole("article", { name: "Seeded image" }).getByLabel("Actions for Seeded image").click();
  await expect(page.getByRole("article", { name: "Seeded image" }).getByRole("link", { name: "Delete" })).toHaveAttribute(
    "href",
    `/image/${id}/delete`,
  );
  await page.goto(`/image/${id}`);
  await page.getByRole("link", { name: "Delete", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Delete image" })).toBeVisible();
  await expectAccessible(page, info);
  await page.getByRole("button", { name: "Yes, delete" }).click();
  const confirm = page.getByLabel("Please type DELETE to confirm");
  await expect(confirm).toBeVisible();
  await confirm.fill("delete");
  await page.getByRole("button", { name: "Delete image" }).click();
  await expect(page.getByText("Please type DELETE to confirm", { exact: true }).last()).toBeVisible();
  expect(await imagesIn(db, project)).toBe(1);
  await confirm.fill("DELETE");
  await page.getByRole("button", { name: "Delete image" }).click();
  await expect(page).toHaveURL(new RegExp(`/client/${project}$`));
  await expect(page.getByText("Image Deleted")).toBeVisible();
  expect(await imagesIn(db, project)).toBe(0);
  expect((await page.goto(`/image/${id}`))!.status()).toBe(404);
});

test("keyboard only: choose a file, upload, fill in Edit Image and submit", async ({ page, signIn, db }, info) => {
  await signIn("uploadKeys");
  const id = await ownProject(db, "uploadKeys", info);
  await page.goto(`/upload/${id}`);
  const input = page.getByLabel("Images to upload", { exact: true });
  // Tab through the page until the file input has focus, as a keyboard user does.
  for (let i = 0; i < 40 && !(await input.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press("Tab");
  // Space on the focused input opens the file chooser. Once in a full CI run on a busy machine (2026-12-02) no
  // chooser came of it for 90 s, with the input focused; not reproduced. A person presses again, and so does this.
  let chooser: FileChooser | undefined;
  await expect(async () => {
    await expect(input).toBeFocused();
    [chooser] = await Promise.all([page.waitForEvent("filechooser", { timeout: 5_000 }), page.keyboard.press("Space")]);
  }).toPass({ timeout: 30_000 });
  await chooser!.setFiles(await jpegFile("keyboard.jpg", "#336699"));
  await page.keyboard.press("Tab");
  await expect(page.getByRole("button", { name: "Upload", exact: true })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "Edit Image" })).toBeVisible();
  const title = page.getByLabel("Title", { exact: true });
  for (let i = 0; i < 20 && !(await title.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press("Tab");
  await expect(title).toBeFocused();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.type("Typed by keyboard");
  await page.keyboard.press("Tab");
  await page.keyboard.type("Made without a mouse");
  await page.keyboard.press("Tab");
  await page.keyboard.type("keyboard, access");
  // Enter in a field submits with the default button, Submit (not Rotate).
  await expect(page.getByLabel("Keywords", { exact: true })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByText("Image submitted")).toBeVisible();
  // Each Tab led to the next field: what was typed landed where it belongs.
  const saved = await db
    .selectFrom("images")
    .select(["description", "keywords"])
    .where("project_id", "=", id)
    .where("title", "=", "Typed by keyboard")
    .execute();
  expect(saved).toEqual([{ description: "Made without a mouse", keywords: JSON.stringify(["keyboard", "access"]) }]);
});

test("the upload page and its API answer 404 outside the user's projects, as for an unknown id", async ({ page, signIn, db }, info) => {
  await signIn("uploadGuard");
  const other = await projectId(db, "Other Project");
  expect((await page.goto(`/upload/${other}`))!.status()).toBe(404);
  // The same words as for an id that is no project at all: nothing says the project exists.
  await expect(page.getByRole("heading", { name: "Client not found" })).toBeVisible();
  await expect(page.getByText(`No Client with ID ${other} found. Please select a client from the dashboard.`)).toBeVisible();
  const res = await page.request.post("/api/uploads", { data: { clientID: other, fileName: "x.jpg" } });
  expect(res.status()).toBe(404);
  // Bodies other than the streamed uploads are capped at 1 MiB and never buffered blind.
  const big = await page.request.post("/api/images", {
    headers: { "Content-Type": "application/json" },
    data: JSON.stringify({ pad: "x".repeat(1_100_000) }),
  });
  expect(big.status()).toBe(413);
  const image = await firstImage(db, await ownProject(db, "editMeta", info));
  expect((await page.goto(`/image/${image}?edit`))!.status()).toBe(404);
  expect((await page.goto(`/image/${image}/delete`))!.status()).toBe(404);
});
