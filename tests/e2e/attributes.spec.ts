import { writeFileSync } from "node:fs";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { bulk, expectAccessible, firstImage, hasJs, tabTo, toast, waitForMail, workshop } from "./support";
import type { DB } from "~/db/connection.server";

const attribute = (db: DB, projectId: number, name: string) =>
  db
    .selectFrom("attributes")
    .select(["id", "name", "code", "active", "type"])
    .where("project_id", "=", projectId)
    .where("name", "=", name)
    .executeTakeFirst();
const valuesOf = async (db: DB, projectId: number, name: string) =>
  (
    await db
      .selectFrom("image_attribute_values as v")
      .innerJoin("attributes as a", "a.id", "v.attribute_id")
      .innerJoin("images as i", "i.id", "v.image_id")
      .select(["i.title", "v.value"])
      .where("a.project_id", "=", projectId)
      .where("a.name", "=", name)
      .orderBy("i.title")
      .execute()
  ).map((r) => `${r.title}: ${r.value}`);
const imageId = async (db: DB, projectId: number, title: string) =>
  (await db.selectFrom("images").select("id").where("project_id", "=", projectId).where("title", "=", title).executeTakeFirstOrThrow()).id;

/** Presses a form's button by its exact name. */
const press = async (page: Page, name: string) => page.getByRole("button", { name, exact: true }).click();

test("Manage Attributes: create with the spec's rules, rename, refuse a bad smart name and a 34th active, delete a user attribute but not a WSC one", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("attrManage");
  const w = await workshop(db, "attrManage", info);
  await page.goto(`/upload/${w.id}`);
  await page.getByRole("link", { name: "Manage Attributes" }).click();
  await expect(page.getByRole("heading", { name: "Manage Attributes" })).toBeVisible();
  await expect(page.getByText("33 of 33 active")).toBeVisible();
  await expectAccessible(page, info);

  // Create: the spec's refusals, then a name with a space.
  const name = page.getByLabel("Attribute Name");
  await name.fill("Price$");
  await press(page, "Create Attribute");
  await expect(page.getByText("Attribute Name cannot contain special characters")).toBeVisible();
  await name.fill("attr01");
  await press(page, "Create Attribute");
  // With JavaScript the loaded list refuses it before posting; without, the server's 409.
  await expect(
    page.getByText(hasJs(info) ? "Duplicate Attribute Name has been given" : "Attribute name already exists. Please choose another name"),
  ).toBeVisible();
  // Spaces only: blank on both paths (one rule: trimmed, then the spaces between words become one underscore each).
  await name.fill("   ");
  await press(page, "Create Attribute");
  await expect(page.getByText("Attribute Name cannot be blank")).toBeVisible();
  await name.fill("Store  type ");
  if (hasJs(info)) {
    // The spaces between words show as the underscore they become; the one after the name is trimmed on saving.
    await expect(name).toHaveValue("Store_type ");
    await expect(page.getByText("Attribute names cannot contain spaces; any spaces have been replaced with underscores")).toBeVisible();
  }
  await press(page, "Create Attribute");
  await expect(toast(page)).toContainText("Attribute “Store_type” created");
  // Created while 33 were active: it waits, inactive.
  await expect(toast(page)).toContainText("Attribute Active Limit Reached of 33");
  expect(await attribute(db, w.id, "Store_type")).toMatchObject({ code: "Store_type", active: 0, type: 3 });
  const names = await db.selectFrom("attributes").select("name").where("project_id", "=", w.id).execute();
  expect(names.map((a) => a.name).filter((n) => /^_*$|_$/.test(n))).toEqual([]);

  // A rename to spaces only is blank too.
  const save = page.getByRole("button", { name: "Save", exact: true });
  const attr01 = (await attribute(db, w.id, "Attr01"))!;
  await page.getByLabel("Name of Attr01", { exact: true }).fill("  ");
  await save.click();
  await expect(page.locator(`#attribute-${attr01.id}-error`)).toHaveText("Attribute Name cannot be blank");
  expect(await attribute(db, w.id, "Attr01")).toMatchObject({ id: attr01.id });

  // Rename, with a smart name the rule refuses first.
  await page.getByLabel("Name of Attr01", { exact: true }).fill("Channel");
  await page.getByLabel("Smart name of Attr01").fill("chan-nel");
  if (hasJs(info)) {
    await expect(page.getByText("Invalid input. Spaces, commas, double quotes, hyphens, and dashes are not allowed.")).toBeVisible();
    await expect(save).toBeDisabled();
  } else {
    await save.click();
    await expect(page.getByText("Invalid input. Spaces, commas, double quotes, hyphens, and dashes are not allowed.")).toBeVisible();
    // What was typed is still there to correct.
    await expect(page.getByLabel("Name of Attr01", { exact: true })).toHaveValue("Channel");
  }
  expect(await attribute(db, w.id, "Channel")).toBeUndefined();
  await page.getByLabel("Smart name of Attr01").fill("channel");
  await save.click();
  await expect(toast(page)).toContainText("1 attribute updated");
  expect(await attribute(db, w.id, "Channel")).toMatchObject({ code: "channel", active: 1 });

  // A 34th active attribute is refused.
  await page.getByLabel("Spare active").click();
  if (!hasJs(info)) await save.click();
  await expect(
    page.getByText("Attribute Active Limit Reached of 33. Please deselect other attributes before selecting new ones"),
  ).toBeVisible();
  // With JavaScript the tick never takes; without, the refused form comes back as typed, and nothing is saved.
  if (hasJs(info)) await expect(page.getByLabel("Spare active")).not.toBeChecked();
  expect(await attribute(db, w.id, "Spare")).toMatchObject({ active: 0 });

  // Delete: a WSC attribute cannot be; a user attribute by typing DELETE.
  await expect(page.getByRole("row", { name: /Source/ })).toContainText("Cannot delete this attribute");
  await page.getByRole("link", { name: "Delete Attr02" }).click();
  await expectAccessible(page, info);
  const confirm = page.getByLabel("Please type 'DELETE' to confirm");
  await confirm.fill("delete");
  await press(page, "Delete attribute");
  await expect(page.getByText("Please type 'DELETE' to confirm").last()).toBeVisible();
  await confirm.fill("DELETE");
  await press(page, "Delete attribute");
  await expect(toast(page)).toContainText("Attribute “Attr02” deleted");
  expect(await attribute(db, w.id, "Attr02")).toBeUndefined();
  const source = (await attribute(db, w.id, "Source"))!;
  await page.goto(`/upload/${w.id}/attributes/${source.id}/delete`);
  await expect(page.getByText("Cannot delete this attribute")).toBeVisible();
});

test(
  "Create Attribute: a space typed between two words shows as an underscore where it was typed, the caret staying there",
  { tag: "@js-only" },
  async ({ page, signIn, db }, info) => {
    await signIn("attrManage");
    const w = await workshop(db, "attrManage", info);
    await page.goto(`/upload/${w.id}/attributes`);
    const name = page.getByLabel("Attribute Name");
    await name.fill("Storetype");
    await name.press("Home");
    for (let i = 0; i < 5; i++) await name.press("ArrowRight");
    await name.press("Space");
    await expect(name).toHaveValue("Store_type");
    await name.pressSequentially("d");
    await expect(name).toHaveValue("Store_dtype");
    // A space at the end stays a space while typing goes on: it becomes an underscore only before the next word.
    await name.press("End");
    await name.press("Space");
    await expect(name).toHaveValue("Store_dtype ");
    await name.pressSequentially("x");
    await expect(name).toHaveValue("Store_dtype_x");
  },
);

test("Manage Attributes at 35 rows: each row's name and smart name as high as the page's other fields and level, and Save always in view", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("look");
  const w = await workshop(db, "look", info);
  await page.setViewportSize({ width: 1366, height: 800 });
  await page.goto(`/upload/${w.id}/attributes`);
  const rows = page.locator("table.attributes-table tbody tr");
  await expect(rows).toHaveCount(35);
  const field = (await page.getByLabel("Attribute Name").boundingBox())!;
  for (const row of await rows.all()) {
    const name = (await row.getByLabel(/^Name of /).boundingBox())!;
    const code = (await row.getByLabel(/^Smart name of /).boundingBox())!;
    expect([name.height, code.height]).toEqual([field.height, field.height]);
    expect(Math.abs(name.y - code.y)).toBeLessThan(0.5);
  }
  const save = page.getByRole("button", { name: "Save", exact: true });
  await expect(save).toBeInViewport();
  await rows.nth(17).scrollIntoViewIfNeeded();
  await expect(save).toBeInViewport();
  await expectAccessible(page, info);
});

test("Replace values already there: the box sits beside its label on the image's and the bulk assign pages", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("look");
  const w = await workshop(db, "look", info);
  await page.request.post(`/client/${w.id}`, { form: { intent: "select-all" } });
  for (const path of [`/image/${await firstImage(db, w.id)}/attributes`, `/client/${w.id}/bulk/attributes`]) {
    await page.goto(path);
    const box = (await page.getByRole("checkbox", { name: "Replace values already there" }).boundingBox())!;
    const label = (await page.getByText("Replace values already there", { exact: true }).boundingBox())!;
    const gap = label.x - (box.x + box.width);
    expect(gap, `${path}: label right of the box`).toBeGreaterThanOrEqual(0);
    expect(gap, `${path}: label right of the box`).toBeLessThan(16);
    expect(Math.abs(box.y + box.height / 2 - (label.y + label.height / 2)), `${path}: box level with the label`).toBeLessThan(3);
    await expectAccessible(page, info);
  }
});

test("image panel: assign a value with the spec's messages and Replace, then remove it by typing REMOVE (keyboard only)", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("attrAssign");
  const w = await workshop(db, "attrAssign", info);
  const id = await imageId(db, w.id, "Workshop 1");
  await page.goto(`/image/${id}`);
  await expect(page.getByRole("row", { name: /Region/ })).toContainText("North");
  await page.getByRole("link", { name: "Assign attribute" }).click();
  await expect(page.getByRole("heading", { name: "Assign attribute" })).toBeVisible();
  await expectAccessible(page, info);
  // Only user attributes are offered (Source is a WSC attribute).
  await expect(page.getByLabel("Attribute Name").locator("option")).toHaveText(["Select an attribute", "Region"]);
  const value = page.getByLabel("Value", { exact: true });
  await expect(page.getByText("1 to 64 characters; none of ( ) & @ $ | % ~")).toBeVisible();
  await value.fill("South");
  await press(page, "Assign");
  await expect(page.getByText("Please select an Attribute Name")).toBeVisible();
  await page.getByLabel("Attribute Name").selectOption({ label: "Region" });
  await value.fill("50%");
  await press(page, "Assign");
  await expect(page.getByText("Value cannot contain special characters")).toBeVisible();
  await value.fill("South");
  await press(page, "Assign");
  await expect(page.getByText("Please remove existing attribute values first")).toBeVisible();
  expect(await valuesOf(db, w.id, "Region")).toEqual(["Workshop 1: North"]);
  await page.getByLabel("Replace values already there").check();
  await press(page, "Assign");
  await expect(toast(page)).toContainText("Attributes successfully assigned");
  await expect(page.getByRole("row", { name: /Region/ })).toContainText("South");
  expect(await valuesOf(db, w.id, "Region")).toEqual(["Workshop 1: South"]);

  // Remove, by keyboard alone.
  await tabTo(page, page.getByRole("link", { name: "Remove Region" }), 60);
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "Remove attribute “Region”" })).toBeVisible();
  await expectAccessible(page, info);
  const confirm = page.getByLabel("Please type 'REMOVE' to remove attribute");
  await expect(confirm).toBeFocused();
  await page.keyboard.type("remove");
  await page.keyboard.press("Enter");
  await expect(page.getByText("Please type 'REMOVE' to remove attribute").last()).toBeVisible();
  await confirm.fill("");
  await confirm.focus();
  await page.keyboard.type("REMOVE");
  await page.keyboard.press("Enter");
  await expect(toast(page)).toContainText("Attribute Removed");
  expect(await valuesOf(db, w.id, "Region")).toEqual([]);
});

test("bulk Assign Attributes on the whole selection keeps values already there; a client-level board asks first", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("attrBulk");
  const w = await workshop(db, "attrBulk", info);
  await page.goto(`/client/${w.id}`);
  await page.getByRole("button", { name: "Select all" }).click();
  await expect(page.getByText("6 selected")).toBeVisible();
  await bulk(page, info, "Assign Attributes");
  await expect(page.getByRole("heading", { name: "Assign Attributes" })).toBeVisible();
  await expectAccessible(page, info);
  await page.getByLabel("Attribute Name").selectOption({ label: "Region" });
  await page.getByLabel("Value", { exact: true }).fill("East");
  await press(page, "Assign to 6 images");
  await expect(toast(page)).toContainText("Attributes successfully assigned: 5 images (1 kept the value they had)");
  expect(await valuesOf(db, w.id, "Region")).toEqual([
    "Workshop 1: North",
    "Workshop 2: East",
    "Workshop 3: East",
    "Workshop 4: East",
    "Workshop 5: East",
    "Workshop 6: East",
  ]);

  await page.goto(w.path("Client review"));
  await page.getByRole("button", { name: "Select all" }).click();
  await expect(page.getByText("2 selected")).toBeVisible();
  await bulk(page, info, "Assign Attributes");
  await page.getByLabel("Attribute Name").selectOption({ label: "Region" });
  await page.getByLabel("Value", { exact: true }).fill("West");
  await page.getByLabel("Replace values already there").check();
  await press(page, "Assign to 2 images");
  await expect(page.getByText("This is a client-level board: changes will be visible for all users.").last()).toBeVisible();
  expect(await valuesOf(db, w.id, "Region")).toContain("Workshop 1: North");
  await page.getByRole("checkbox", { name: /I understand/ }).check();
  await press(page, "Assign to 2 images");
  await expect(toast(page)).toContainText("Attributes successfully assigned: 2 images");
  expect((await valuesOf(db, w.id, "Region")).slice(0, 2)).toEqual(["Workshop 1: West", "Workshop 2: West"]);
});

/** A mail's CSV attachment, decoded, as rows of cells (the BOM dropped). */
function csvAttachment(raw: string): string[][] {
  const m = /Content-Disposition: attachment;\s*filename="?([^"\r\n]+)"?\r\n(?:[^\r\n]+\r\n)*\r\n([\s\S]*?)\r\n--/.exec(raw);
  expect(m, "the mail has an attachment").not.toBeNull();
  const text = Buffer.from(m![2]!.replace(/\s+/g, ""), "base64").toString("utf8");
  expect(text.charCodeAt(0)).toBe(0xfeff);
  return text
    .slice(1)
    .trim()
    .split(/\r?\n/)
    .map((line) => line.split(","));
}

test("export attributes by email, from the image panel and from the bulk menu: the CSV arrives by mail", async ({
  page,
  signIn,
  db,
}, info) => {
  const { email } = await signIn("attrExport");
  const w = await workshop(db, "attrExport", info);
  let since = Date.now();
  await page.goto(`/image/${await imageId(db, w.id, "Workshop 1")}`);
  await press(page, "Export attributes by email");
  await expect(toast(page)).toContainText("Image attributes will be sent to your email shortly.");
  const one = csvAttachment(await waitForMail(email, since));
  expect(one).toEqual([
    ["Image ID", "Title", "Keywords", "Region", "Source"],
    [String(await imageId(db, w.id, "Workshop 1")), "Workshop 1", "shelf", "North", ""],
  ]);

  since = Date.now();
  await page.goto(`/client/${w.id}`);
  await page.getByRole("button", { name: "Select all" }).click();
  await expect(page.getByText("6 selected")).toBeVisible();
  await bulk(page, info, "Export attributes by email");
  await expectAccessible(page, info);
  await press(page, "Email attributes of 6 images");
  await expect(toast(page)).toContainText("Image attributes will be sent to your email shortly.");
  const all = csvAttachment(await waitForMail(email, since));
  expect(all.map((r) => r[1])).toEqual(["Title", "Workshop 1", "Workshop 2", "Workshop 3", "Workshop 4", "Workshop 5", "Workshop 6"]);
});

test("Import Attributes CSV: wrong type and over 100 MB refused, a file with errors or unreadable text reported and nothing changed, a good file (UTF-8 or Windows-1252) applied", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("attrImport");
  const w = await workshop(db, "attrImport", info);
  const [one, two] = [await imageId(db, w.id, "Workshop 1"), await imageId(db, w.id, "Workshop 2")];
  await page.goto(`/upload/${w.id}`);
  await page.getByRole("link", { name: "Import Attributes CSV" }).click();
  await expect(page.getByRole("heading", { name: "Import Attributes CSV" })).toBeVisible();
  await expectAccessible(page, info);
  const file = page.getByLabel("CSV file");
  const send = async (name: string, buffer: Buffer) => {
    await file.setInputFiles({ name, mimeType: name.endsWith(".csv") ? "text/csv" : "application/octet-stream", buffer });
    await press(page, "Import");
  };

  await send("regions.xlsx", Buffer.from("PK"));
  await expect(page.getByText("Please upload a CSV file")).toBeVisible();
  // Over 100 MB: from a file on disk (Playwright passes buffers up to 50 MB only).
  const huge = info.outputPath("huge.csv");
  writeFileSync(huge, Buffer.alloc(100 * 1024 * 1024 + 1, 0x41));
  await file.setInputFiles(huge);
  await press(page, "Import");
  await expect(page.getByText("Please upload a file that is less than 100MB")).toBeVisible();

  await send("bad.csv", Buffer.from(`Image ID,Region,Colour\n${one},South,x\n${two},a|b,\n`));
  await expect(page.getByRole("heading", { name: "CSV Import Error" })).toBeVisible();
  await expect(page.getByText('Line 1: Unknown column "Colour": not an attribute of this project')).toBeVisible();
  await send("bad.csv", Buffer.from(`Image ID,Region\n${one},South\n${two},a|b\n`));
  await expect(page.getByText("Line 3: Region: Value cannot contain special characters")).toBeVisible();
  expect(await valuesOf(db, w.id, "Region")).toEqual(["Workshop 1: North"]);

  // Text that cannot be read (a UTF-8 BOM, then a Latin-1 é) is refused with its line, never stored as "Caf�".
  await send("broken.csv", Buffer.concat([Buffer.from(`\uFEFFImage ID,Region\n${one},South\n${two},Caf`), Buffer.from([0xe9, 0x0a])]));
  await expect(page.getByRole("heading", { name: "File Read Error" })).toBeVisible();
  await expect(page.getByText(/^Line 3: Characters here could not be read/)).toBeVisible();
  await expectAccessible(page, info);
  expect(await valuesOf(db, w.id, "Region")).toEqual(["Workshop 1: North"]);
  // Excel's plain CSV on Windows (Windows-1252): read as such.
  const three = await imageId(db, w.id, "Workshop 3");
  const latin = (text: string) => Buffer.from([...text].map((c) => c.charCodeAt(0)));
  await send("latin.csv", latin(`Image ID,Region\n${one},Café\n${two},Crème\n${three},Zürich\n`));
  await expect(toast(page)).toContainText("3 values from 3 rows.");
  expect(await valuesOf(db, w.id, "Region")).toEqual(["Workshop 1: Café", "Workshop 2: Crème", "Workshop 3: Zürich"]);

  await send("regions.csv", Buffer.from(`\uFEFFImage ID,Title,Region\n${one},,South\n${two},,West\n`));
  await expect(toast(page)).toContainText("Attributes imported");
  await expect(toast(page)).toContainText("2 values from 2 rows.");
  expect(await valuesOf(db, w.id, "Region")).toEqual(["Workshop 1: South", "Workshop 2: West", "Workshop 3: Zürich"]);
});

test("Import Attributes CSV: a large file runs in the background, its page shows the outcome (failed, or done) and an e-mail follows", async ({
  page,
  signIn,
  db,
}, info) => {
  const { email } = await signIn("attrImport2");
  const w = await workshop(db, "attrImport2", info);
  const ids = await Promise.all([1, 2, 3].map((i) => imageId(db, w.id, `Workshop ${i}`)));
  // Over the 512 KB that are applied while the page waits: the same three images again and again (the last row wins).
  const rows = Array.from({ length: 80_000 }, (_, i) => `${ids[i % 3]},Zone ${i % 3}`);
  // A large file with an error runs in the background too: its page says the import failed (never "Done").
  await page.goto(`/upload/${w.id}/import`);
  await page.getByLabel("CSV file").setInputFiles({
    name: "zones.csv",
    mimeType: "text/csv",
    buffer: Buffer.from(`Image ID,Region\n${rows.join("\n")}\n${ids[0]},a|b\n`),
  });
  await press(page, "Import");
  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  await expect(page.getByRole("heading", { level: 1, name: "Importing attributes failed" })).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole("heading", { name: "CSV Import Error" })).toBeVisible();
  await expect(page.getByText("Line 80002: Region: Value cannot contain special characters")).toBeVisible();
  await expect(page).toHaveTitle("Failed | Koala");
  await expect(page.getByRole("heading", { name: "Done" })).toHaveCount(0);
  expect(await valuesOf(db, w.id, "Region")).toEqual(["Workshop 1: North"]);

  const since = Date.now();
  await page.goto(`/upload/${w.id}/import`);
  await page
    .getByLabel("CSV file")
    .setInputFiles({ name: "zones.csv", mimeType: "text/csv", buffer: Buffer.from(`Image ID,Region\n${rows.join("\n")}\n`) });
  await press(page, "Import");
  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  await expect(page.getByText("Imported 80,000 values from 80,000 rows.")).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole("heading", { level: 1, name: "Done" })).toBeVisible();
  await expectAccessible(page, info);
  expect(await valuesOf(db, w.id, "Region")).toEqual(["Workshop 1: Zone 0", "Workshop 2: Zone 1", "Workshop 3: Zone 2"]);
  const mail = (await waitForMail(email, since)).replace(/=\r?\n/g, "");
  expect(mail).toContain("Subject: Attribute import done: zones.csv");
  expect(mail).toContain("Imported: 80,000 values from 80,000 rows.");
});
