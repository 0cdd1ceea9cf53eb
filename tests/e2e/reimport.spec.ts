import { expect, test } from "./fixtures";
import { expectAccessible, tabTo, toast, workshop } from "./support";
import { boardsProject } from "./users";
import type { DB } from "~/db/connection.server";

/** The re-import jobs a person started (a finished job's payload is cleared; its owner stays). */
const jobsOf = async (db: DB, email: string) =>
  (
    await db
      .selectFrom("jobs")
      .innerJoin("users", "users.id", "jobs.owner_user_id")
      .select("jobs.id")
      .where("jobs.type", "=", "project.reimport")
      .where("users.email", "=", email)
      .execute()
  ).length;

test("re-import a project by keyboard: the client name typed exactly (the spec's two messages), then the job's page until it is done, with its report", async ({
  page,
  signIn,
  db,
}, info) => {
  const { email } = await signIn("reimport");
  const w = await workshop(db, "reimport", info);
  const name = boardsProject("reimport", info.project.name);
  await page.goto(`/upload/${w.id}`);
  const tile = page.getByRole("link", { name: "Re-import", exact: true });
  await tabTo(page, tile, 40);
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: `Re-import ${name}` })).toBeVisible();
  await expect(page.getByText("Every image's thumbnail, preview and search index are made again from its original.")).toBeVisible();
  await expectAccessible(page, info);

  const field = page.getByLabel("Type the client name to confirm");
  const send = page.getByRole("button", { name: "Re-import", exact: true });
  await send.click();
  await expect(page.getByText("Please enter the client name")).toBeVisible();
  await field.fill(name.toUpperCase());
  await field.press("Enter");
  await expect(page.getByText("Client name does not match, Please try again")).toBeVisible();
  expect(await jobsOf(db, email)).toBe(0);

  await field.fill(name);
  await field.press("Enter");
  await expect(toast(page).getByText("Re-import request sent")).toBeVisible();
  await expect(page.getByText("the re-import process is now running in the background")).toBeVisible();
  // The page follows the job (a refresh without JavaScript, polling with it) until it is done.
  await expect(page.getByRole("heading", { name: "Done" })).toBeVisible({ timeout: 30_000 });
  expect(await jobsOf(db, email)).toBe(1);
  await expect(page.getByText("6 images made again from their originals (0 with corrected file details), 0 could not be.")).toBeVisible();
  await expectAccessible(page, info);
  await page.getByRole("link", { name: "Back to Upload" }).click();
  await expect(page).toHaveURL(new RegExp(`/upload/${w.id}$`));
});
