import type { Page } from "@playwright/test";
import exifr from "exifr";
import { photo } from "../helpers/images";
import { expect, test } from "./fixtures";
import { expectAccessible, ownProject, projectId, toast } from "./support";
import type { DB } from "~/db/connection.server";

/** Uploads one photo (EXIF as given) through the upload page and submits its Edit Image step; answers its id. */
async function upload(page: Page, db: DB, projectId: number, name: string, exif: Parameters<typeof photo>[0]) {
  await page.goto(`/upload/${projectId}`);
  await page
    .getByLabel("Images to upload", { exact: true })
    .setInputFiles({ name, mimeType: "image/jpeg", buffer: await photo(exif, 320, 240) });
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Edit Image" })).toBeVisible();
  await page.getByRole("button", { name: "Submit" }).click();
  await expect(page.getByText("Image submitted")).toBeVisible();
  const row = await db
    .selectFrom("images")
    .select("id")
    .where("project_id", "=", projectId)
    .where("original_name", "=", name)
    .executeTakeFirstOrThrow();
  return row.id;
}

const cardTitles = (page: Page) => page.locator(".image-card-title").allInnerTexts();

test(
  "upload photos: the panel shows when and with what each was taken, and the grid sorts newest taken first and narrows to days",
  { tag: "@core" },
  async ({ page, signIn, db }, info) => {
    await signIn("capture");
    const projectId = await ownProject(db, "capture", info);
    const spring = await upload(page, db, projectId, "spring-shelf.jpg", {
      taken: "2026:03:04 09:05:00",
      make: "Canon",
      model: "Canon EOS R6",
      gps: { lat: 51.5, lon: -0.12 },
    });
    await upload(page, db, projectId, "old-shelf.jpg", { taken: "2019:06:01 10:00:00", make: "FUJIFILM", model: "X-T5" });

    await page.goto(`/image/${spring}`);
    const details = page.locator(".capture-details");
    await expect(details).toContainText("Taken");
    await expect(details.locator("time")).toHaveText("4 Mar 2026, 09:05");
    await expect(details.locator("time")).toHaveAttribute("datetime", "2026-03-04T09:05:00");
    await expect(details).toContainText("Canon EOS R6");
    // The project keeps no positions (the default): none is shown, none was stored, and the original downloaded
    // from the panel no longer holds it (its other tags do).
    await expect(details).not.toContainText("Location");
    const download = await page.request.get((await page.getByRole("link", { name: "Download", exact: true }).getAttribute("href"))!);
    expect(download.status()).toBe(200);
    const exif = (await exifr.parse(await download.body())) as Record<string, unknown>;
    expect(exif).toMatchObject({ Make: "Canon", Model: "Canon EOS R6" });
    expect(Object.keys(exif).filter((tag) => /gps|latitude|longitude/i.test(tag))).toEqual([]);
    await expectAccessible(page, info);

    // Newest added first by default; then newest taken first (the seeded picture was "taken" in 2024–2025).
    await page.goto(`/client/${projectId}`);
    await expect.poll(() => cardTitles(page)).toEqual(["old-shelf", "spring-shelf", "Seeded image"]);
    await page.getByLabel("Order").selectOption("taken");
    await page.getByRole("button", { name: "Apply", exact: true }).click();
    await expect(page).toHaveURL(/sort=taken/);
    await expect.poll(() => cardTitles(page)).toEqual(["spring-shelf", "Seeded image", "old-shelf"]);

    // A range of days, with the order kept; then the dates cleared.
    await page.getByLabel("Taken from").fill("2026-01-01");
    await page.getByRole("button", { name: "Apply", exact: true }).click();
    await expect(page.getByText("Showing images taken on 2026-01-01 or after.")).toBeVisible();
    await expect.poll(() => cardTitles(page)).toEqual(["spring-shelf"]);
    await expectAccessible(page, info);
    await page.getByRole("link", { name: "Clear dates" }).click();
    await expect(page).toHaveURL(/sort=taken/);
    await expect.poll(() => cardTitles(page)).toEqual(["spring-shelf", "Seeded image", "old-shelf"]);
  },
);

test("a manager lets photos keep where they were taken: a new photo's position shows; turned off, every position is gone, from the files too", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("captureGps");
  const projectId = await ownProject(db, "captureGps", info);
  const setKeepGps = async (on: boolean) => {
    await page.goto(`/client/${projectId}/edit`);
    const box = page.getByLabel("Keep where photos were taken (GPS)");
    await box.setChecked(on);
    await page.getByRole("button", { name: "Save" }).click();
    await expect(toast(page)).toContainText("Project saved");
  };
  await setKeepGps(true);
  const id = await upload(page, db, projectId, "located.jpg", { taken: "2025:07:08 16:30:00", gps: { lat: -33.856784, lon: 151.215297 } });
  await page.goto(`/image/${id}`);
  await expect(page.locator(".capture-details")).toContainText("Location");
  await expect(page.locator(".capture-details")).toContainText("-33.856784, 151.215297");
  // Kept: the original downloaded is the file as uploaded, position and all.
  const download = await page.request.get((await page.getByRole("link", { name: "Download", exact: true }).getAttribute("href"))!);
  expect(await exifr.parse(await download.body())).toMatchObject({ latitude: expect.closeTo(-33.856784, 4) });

  await setKeepGps(false);
  await page.goto(`/image/${id}`);
  await expect(page.locator(".capture-details")).toContainText("8 Jul 2025, 16:30");
  await expect(page.locator(".capture-details")).not.toContainText("Location");
  // In the background, the original is swapped for its copy without the position: the panel's download then has none.
  const originalKey = () => db.selectFrom("images").select("storage_key").where("id", "=", id).executeTakeFirstOrThrow();
  await expect.poll(async () => (await originalKey()).storage_key, { timeout: 20_000 }).toMatch(/-nogps\.jpg$/);
  await page.reload();
  const after = await page.request.get((await page.getByRole("link", { name: "Download", exact: true }).getAttribute("href"))!);
  expect(after.status()).toBe(200);
  expect(await exifr.parse(await after.body())).not.toHaveProperty("latitude");
  expect(await db.selectFrom("images").select(["gps_lat", "gps_lon"]).where("id", "=", id).executeTakeFirstOrThrow()).toEqual({
    gps_lat: null,
    gps_lon: null,
  });
  await page.goto(`/client/${projectId}/edit`);
  await expect(page.getByLabel("Keep where photos were taken (GPS)")).not.toBeChecked();
  await expectAccessible(page, info);
});

test("a typed day that is not one is said beside its field and left out; so is a range that ends before it starts", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("captureDates");
  const path = `/client/${await projectId(db, "E2E Project")}`;
  // What a browser without a date picker sends: the days as typed.
  await page.goto(`${path}?takenFrom=${encodeURIComponent("31/12/2024")}&takenTo=2024-02-30`);
  const from = page.getByLabel("Taken from");
  const to = page.getByLabel("Taken to");
  await expect(from).toHaveAttribute("aria-invalid", "true");
  await expect(from).toHaveAccessibleDescription(
    '"31/12/2024" is not a date: enter it as YYYY-MM-DD, for example 2024-05-31. This date was left out.',
  );
  await expect(to).toHaveAccessibleDescription("There is no day 2024-02-30: enter a real day, from 1970-01-01 on. This date was left out.");
  // Both left out: the grid is not narrowed, and says no range.
  await expect(page.getByRole("article").first()).toContainText("E2E image");
  await expect(page.getByText(/Showing images taken/)).toHaveCount(0);
  await expectAccessible(page, info);

  // A range that ends before it starts, through the form, sent from the keyboard (Enter in a field submits it).
  await from.fill("2024-05-02");
  await to.fill("2024-05-01");
  await to.press("Enter");
  await expect(page).toHaveURL(/takenFrom=2024-05-02&takenTo=2024-05-01/);
  await expect(page.getByLabel("Taken to")).toHaveAccessibleDescription(
    'The range ends before it starts: "Taken to" (2024-05-01) is before "Taken from" (2024-05-02), so no image is in it.',
  );
  await expect(page.getByLabel("Taken from")).not.toHaveAttribute("aria-invalid");
  await expect(page.getByText("No related images found")).toBeVisible();
});
