import { expect, test, type Page, type TestInfo } from "@playwright/test";
import sharp from "sharp";
import { existsSync } from "node:fs";
import path from "node:path";
import { E2E_DIR } from "./global-setup";
import { e2eRow, e2eRows, expectAccessible, hasJs, signInWithPassword, userFor } from "./support";
import { uploadProject, type Scenario } from "./users";

/** Real JPEG files, made on the fly, as a file input takes them. */
async function jpegFile(name: string, color: string, width = 640, height = 480) {
  const buffer = await sharp({ create: { width, height, channels: 3, background: color } }).jpeg().toBuffer();
  return { name, mimeType: "image/jpeg", buffer };
}

const ownProject = (scenario: Scenario, info: TestInfo) =>
  e2eRow<{ id: number }>("select id from projects where name = ?", uploadProject(scenario, info.project.name));
const imagesIn = (projectId: number) => e2eRow<{ n: number }>("select count(*) as n from images where project_id = ?", projectId).n;
const seededImage = (projectId: number) => e2eRow<{ id: number }>("select id from images where project_id = ? order by id limit 1", projectId);

async function signIn(page: Page, info: TestInfo, scenario: Scenario) {
  await signInWithPassword(page, userFor(info, scenario));
  await expect(page).toHaveURL(/\/dashboard$/);
}

test("upload one image, fix a bad keyword, submit it with its details", async ({ page }, info) => {
  await signIn(page, info, "uploadOne");
  const { id } = ownProject("uploadOne", info);
  await page.goto(`/upload/${id}`);
  await expect(page.getByRole("link", { name: "Manage Attributes" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Re-import" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Import Attributes CSV" })).toBeVisible();
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
  await page.getByLabel("Keywords", { exact: true }).fill("aisle, end cap, promo");
  await page.getByLabel("Description", { exact: true }).fill("End of aisle display");
  await page.getByRole("button", { name: "Submit" }).click();

  // A single upload returns to the upload view.
  await expect(page).toHaveURL(new RegExp(`/upload/${id}$`));
  await expect(page.getByText("Image submitted")).toBeVisible();
  const row = e2eRow<{ title: string; keywords: string; description: string; version: number }>(
    "select title, keywords, description, version from images where project_id = ? and original_name = 'Aisle in Leeds.jpg'",
    id,
  );
  expect(row).toMatchObject({ title: "Aisle in Leeds", description: "End of aisle display", version: 2 });
  expect(JSON.parse(row.keywords)).toEqual(["aisle", "end cap", "promo"]);
});

test("upload several images, edit one, submit the rest without editing", async ({ page }, info) => {
  await signIn(page, info, "uploadMany");
  const { id } = ownProject("uploadMany", info);
  const before = imagesIn(id);
  await page.goto(`/upload/${id}`);
  await page.getByLabel("Images to upload", { exact: true }).setInputFiles([await jpegFile("one.jpg", "#112233"), await jpegFile("two.jpg", "#445566"), await jpegFile("three.jpg", "#778899")]);
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Multiple Uploaded Images" })).toBeVisible();
  await expect(page.locator(".uploaded-list").getByRole("link")).toHaveCount(3);
  expect(imagesIn(id)).toBe(before + 3);
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
  await page.getByRole("link", { name: "Submit without editing" }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
  expect(e2eRow<{ n: number }>("select count(*) as n from images where project_id = ? and title = 'Second shelf'", id).n).toBe(1);
});

test("a bad file stops with a clear message and leaves the good ones going", async ({ page }, info) => {
  await signIn(page, info, "uploadBad");
  const { id } = ownProject("uploadBad", info);
  const before = imagesIn(id);
  let dialogs = 0;
  page.on("dialog", (d) => {
    dialogs += 1;
    void d.dismiss();
  });
  await page.goto(`/upload/${id}`);
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByText("Choose at least one image to upload.")).toBeVisible();
  const good = await jpegFile('"><img src=x onerror=alert(1)>.jpg', "#228844");
  const svg = { name: "drawing.jpg", mimeType: "image/jpeg", buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>') };
  const truncated = { name: "cut.jpg", mimeType: "image/jpeg", buffer: (await jpegFile("x.jpg", "#884422")).buffer.subarray(0, 1200) };
  await page.getByLabel("Images to upload", { exact: true }).setInputFiles([good, svg, truncated]);
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByText("1 of 3 uploaded")).toBeVisible();
  await expect(page.getByText(/Internal server error: The file is not a supported image/)).toBeVisible();
  await expect(page.getByText(/Internal server error: The image could not be read/)).toBeVisible();
  expect(imagesIn(id)).toBe(before + 1);
  if (hasJs(info)) await expect(page.getByRole("button", { name: "Retry" })).toHaveCount(2);
  await page.getByRole("link", { name: "Continue with 1 uploaded image" }).click();
  await expect(page.getByRole("heading", { name: "Edit Image" })).toBeVisible();
  // The hostile name is kept as text, never markup.
  await expect(page.getByLabel("Title", { exact: true })).toHaveValue('"><img src=x onerror=alert(1)>');
  expect(dialogs).toBe(0);
  // The refused files' bytes are gone from storage at once (their records wait for the sweep).
  const refused = e2eRows<{ key: string }>("select p.key from pending_uploads p join users u on u.id = p.user_id where u.email = ? and p.image_id is null", userFor(info, "uploadBad"));
  expect(refused).toHaveLength(2);
  for (const { key } of refused) expect(existsSync(path.join(E2E_DIR, "data", "objects", key))).toBe(false);
});

test("edit metadata in the image panel; the version slider shows the history and the old-version banner", async ({ page }, info) => {
  await signIn(page, info, "editMeta");
  const { id: projectId } = ownProject("editMeta", info);
  const { id } = seededImage(projectId);
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
});

test("rotate in 90° steps and save: new derivatives, the original kept", async ({ page }, info) => {
  await signIn(page, info, "rotate");
  const { id: projectId } = ownProject("rotate", info);
  const { id } = seededImage(projectId);
  const before = e2eRow<{ storage_key: string; thumb_key: string }>("select storage_key, thumb_key from images where id = ?", id);
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
  const after = e2eRow<{ storage_key: string; thumb_key: string; rotation: number; version: number }>("select storage_key, thumb_key, rotation, version from images where id = ?", id);
  expect(after).toMatchObject({ storage_key: before.storage_key, rotation: 180, version: 2 });
  expect(after.thumb_key).not.toBe(before.thumb_key);
  await expect(page.getByText(/rotated to 180°/)).toBeVisible();
  const thumb = await page.request.get(`/media/${id}/${after.thumb_key.replaceAll("/", "~")}`);
  expect(thumb.status()).toBe(200);
});

test("delete an image: two confirmations, the second typing DELETE", async ({ page }, info) => {
  await signIn(page, info, "deleteImg");
  const { id: projectId } = ownProject("deleteImg", info);
  const { id } = seededImage(projectId);
  // From the project grid: the card's Delete leads to the same confirmation as the panel's.
  await page.goto(`/client/${projectId}`);
  await page.getByRole("link", { name: "Delete Seeded image" }).focus();
  await expect(page.getByRole("link", { name: "Delete Seeded image" })).toHaveAttribute("href", `/image/${id}/delete`);
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
  expect(imagesIn(projectId)).toBe(1);
  await confirm.fill("DELETE");
  await page.getByRole("button", { name: "Delete image" }).click();
  await expect(page).toHaveURL(new RegExp(`/client/${projectId}$`));
  await expect(page.getByText("Image Deleted")).toBeVisible();
  expect(imagesIn(projectId)).toBe(0);
  expect((await page.goto(`/image/${id}`))!.status()).toBe(404);
});

test("keyboard only: choose a file, upload, fill in Edit Image and submit", async ({ page }, info) => {
  await signIn(page, info, "uploadKeys");
  const { id } = ownProject("uploadKeys", info);
  await page.goto(`/upload/${id}`);
  const input = page.getByLabel("Images to upload", { exact: true });
  // Tab through the page until the file input has focus, as a keyboard user does.
  for (let i = 0; i < 40 && !(await input.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press("Tab");
  await expect(input).toBeFocused();
  const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.keyboard.press("Space")]);
  await chooser.setFiles(await jpegFile("keyboard.jpg", "#336699"));
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
  await page.getByLabel("Keywords", { exact: true }).press("Enter");
  await expect(page.getByText("Image submitted")).toBeVisible();
  expect(e2eRow<{ n: number }>("select count(*) as n from images where project_id = ? and title = 'Typed by keyboard'", id).n).toBe(1);
});

test("the upload page and its API answer 404 outside the user's projects", async ({ page }, info) => {
  await signIn(page, info, "uploadGuard");
  const other = e2eRow<{ id: number }>("select id from projects where name = 'Other Project'");
  expect((await page.goto(`/upload/${other.id}`))!.status()).toBe(404);
  const res = await page.request.post("/api/uploads", { data: { clientID: other.id, fileName: "x.jpg" } });
  expect(res.status()).toBe(404);
  // Bodies other than the streamed uploads are capped at 1 MiB and never buffered blind.
  const big = await page.request.post("/api/images", { headers: { "Content-Type": "application/json" }, data: JSON.stringify({ pad: "x".repeat(1_100_000) }) });
  expect(big.status()).toBe(413);
  const image = seededImage(ownProject("editMeta", info).id);
  expect((await page.goto(`/image/${image.id}?edit`))!.status()).toBe(404);
  expect((await page.goto(`/image/${image.id}/delete`))!.status()).toBe(404);
});
