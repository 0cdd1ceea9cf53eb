import type { Page } from "@playwright/test";
import sharp from "sharp";
import { drawDemoImage } from "~/services/demo.server";
import { expect, test } from "./fixtures";
import { expectAccessible, ownProject, tabTo, toast } from "./support";
import type { DB } from "~/db/connection.server";

/**
 * A copy of the project's seeded picture (seed.ts: drawDemoImage(3, 400, 300)), edited as people do: smaller and a
 * little brighter, re-compressed.
 */
const copyOfSeeded = async (name: string) => ({
  name,
  mimeType: "image/jpeg",
  buffer: await sharp(await drawDemoImage(3, 400, 300))
    .resize(320)
    .modulate({ brightness: 1.08 })
    .jpeg({ quality: 70 })
    .toBuffer(),
});

async function uploadCopy(page: Page, projectId: number, name: string) {
  await page.goto(`/upload/${projectId}`);
  await page.getByLabel("Images to upload", { exact: true }).setInputFiles(await copyOfSeeded(name));
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Edit Image" })).toBeVisible();
}

const imagesNamed = (db: DB, projectId: number, name: string) =>
  db.selectFrom("images").select(["id", "dup_of"]).where("project_id", "=", projectId).where("original_name", "=", name).execute();

test(
  "a second upload of an edited copy: 'This looks like image #N' with View, Skip, Keep both, and Possible duplicates in a group until someone decides there (by keyboard)",
  { tag: "@core" },
  async ({ page, signIn, db }, info) => {
    await signIn("duplicates");
    const projectId = await ownProject(db, "duplicates", info);
    const seeded = await db
      .selectFrom("images")
      .select("id")
      .where("project_id", "=", projectId)
      .where("title", "=", "Seeded image")
      .executeTakeFirstOrThrow();
    const notice = page.getByRole("region", { name: `This looks like image #${seeded.id} already in the project` });

    // Skip: the copy is deleted.
    await uploadCopy(page, projectId, "copy-skip.jpg");
    await expect(notice).toBeVisible();
    // View: the look-alike opens beside the upload (a new tab, so the upload's step stays as it is).
    const opened = page.waitForEvent("popup");
    await notice.getByRole("link", { name: `View image #${seeded.id}` }).click();
    const view = await opened;
    await expect(view).toHaveURL(new RegExp(`/image/${seeded.id}$`));
    await expect(view.getByRole("heading", { name: "Seeded image" })).toBeVisible();
    await view.close();
    await expectAccessible(page, info);
    await notice.getByRole("button", { name: "Skip this upload" }).click();
    await expect(toast(page)).toContainText("Upload skipped");
    expect(await imagesNamed(db, projectId, "copy-skip.jpg")).toEqual([]);

    // Submitted without an answer: it waits in Possible duplicates, where Keep both takes it off.
    await uploadCopy(page, projectId, "copy-later.jpg");
    await expect(notice).toBeVisible();
    await page.getByRole("button", { name: "Submit" }).click();
    await expect(page.getByText("Image submitted")).toBeVisible();
    await page.goto(`/client/${projectId}`);
    await page.getByRole("link", { name: "Possible duplicates" }).click();
    await expect(page.getByRole("heading", { name: "Possible duplicates" })).toBeVisible();
    const group = page.locator(".duplicate-groups > li");
    await expect(group).toHaveCount(1);
    await expect(group.getByRole("heading", { name: `Seeded image #${seeded.id}: 1 possible copy` })).toBeVisible();
    await expect(group).toContainText("First in the project: Seeded image");
    await expect(group).toContainText("Looks like it: copy-later");
    await expectAccessible(page, info);
    // By keyboard alone: Tab to the group's Keep both, then Enter.
    await tabTo(page, group.getByRole("button", { name: /Keep both/ }));
    await page.keyboard.press("Enter");
    await expect(toast(page)).toContainText("Both images kept");
    await expect(page.getByText("No possible duplicates in this project.")).toBeVisible();

    // Keep both on the upload's own step: the notice goes, the editing goes on. The same file as copy-later: that is
    // the closest look-alike now.
    const [later] = await imagesNamed(db, projectId, "copy-later.jpg");
    const closest = page.getByRole("region", { name: `This looks like image #${later!.id} already in the project` });
    await uploadCopy(page, projectId, "copy-keep.jpg");
    await closest.getByRole("button", { name: "Keep both" }).click();
    await expect(toast(page)).toContainText("Both images kept");
    await expect(page.getByRole("heading", { name: "Edit Image" })).toBeVisible();
    await expect(closest).toHaveCount(0);
    await page.getByRole("button", { name: "Submit" }).click();
    await expect(page.getByText("Image submitted")).toBeVisible();
    expect(await imagesNamed(db, projectId, "copy-keep.jpg")).toEqual([expect.objectContaining({ dup_of: null })]);
    expect(await imagesNamed(db, projectId, "copy-later.jpg")).toEqual([expect.objectContaining({ dup_of: null })]);
  },
);
