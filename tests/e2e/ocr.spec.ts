import { readFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "@playwright/test";
import { OCR_JOB } from "~/lib/job-types";
import { expect, test } from "./fixtures";
import { expectAccessible, ownProject, toast } from "./support";
import type { DB } from "~/db/connection.server";

// Its truth (tests/fixtures/ocr/truth.json): "Urban Roast / Sparkling water 2.51 / SAVE 30% / TOTAL 20.54 EUR".
const receipt = () => ({
  name: "receipt.jpg",
  mimeType: "image/jpeg",
  buffer: readFileSync(path.join("tests/fixtures/ocr/clean-04.jpg")),
});

/** Uploads the receipt into the project and submits its Edit Image step (with `ocr` typed into it, if given). */
async function uploadReceipt(page: Page, projectId: number, ocr?: string) {
  await page.goto(`/upload/${projectId}`);
  await page.getByLabel("Images to upload", { exact: true }).setInputFiles(receipt());
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Edit Image" })).toBeVisible();
  if (ocr !== undefined) await page.getByLabel("OCR text", { exact: true }).fill(ocr);
  await page.getByRole("button", { name: "Submit" }).click();
  await expect(page.getByText("Image submitted")).toBeVisible();
}

const receiptId = async (db: DB, projectId: number) =>
  (
    await db
      .selectFrom("images")
      .select("id")
      .where("project_id", "=", projectId)
      .where("original_name", "=", "receipt.jpg")
      .executeTakeFirstOrThrow()
  ).id;

/**
 * Waits until the runner in the server has finished `readings` readings of the image (a done job's result names its
 * image; its payload is dropped) and none is waiting.
 */
async function readingsFinished(db: DB, imageId: number, readings = 1) {
  const ocrJobs = () => db.selectFrom("jobs").select(["status", "result", "payload"]).where("type", "=", OCR_JOB).execute();
  await expect
    .poll(
      async () => {
        const jobs = await ocrJobs();
        const done = jobs.filter((j) => j.status === "done" && JSON.parse(j.result ?? "{}").imageId === imageId).length;
        const waiting = jobs.filter(
          (j) => (j.status === "queued" || j.status === "running") && JSON.parse(j.payload).imageId === imageId,
        ).length;
        return { done: Math.min(done, readings), waiting };
      },
      { timeout: 60_000 },
    )
    .toEqual({ done: readings, waiting: 0 });
}

test(
  "upload a receipt: Koala reads its text into the panel, and a keyword search finds it by a word only in the picture",
  { tag: "@core" },
  async ({ page, signIn, db }, info) => {
    await signIn("ocrRead");
    const projectId = await ownProject(db, "ocrRead", info);
    await uploadReceipt(page, projectId);
    const id = await receiptId(db, projectId);
    await readingsFinished(db, id);

    await page.goto(`/image/${id}`);
    const ocr = page.locator(".ocr");
    await expect(ocr).toContainText("Urban Roast");
    await expect(ocr).toContainText("TOTAL 20.54 EUR");
    await expect(page.getByText("Read from the picture by Koala.")).toBeVisible();
    await expect(page.getByText(/Version 3 of 3|Version 2 of 2/)).toContainText("OCR text read by Koala");
    await expectAccessible(page, info);

    // "Read text again": the reading is queued and the toast says so; the text is the same picture's.
    await page.getByRole("button", { name: "Read text again" }).click();
    await expect(toast(page)).toContainText("Koala is reading the text in the picture");
    await readingsFinished(db, id, 2);
    await page.reload();
    await expect(page.locator(".ocr")).toContainText("Urban Roast");

    // "sparkling" is only in the picture: the search finds the receipt and not the project's seeded image.
    await page.goto(`/client/${projectId}?q=sparkling`);
    await expect(page.getByRole("link", { name: /receipt/i }).first()).toBeVisible();
    await expect(page.getByRole("link", { name: /Seeded image/ })).toHaveCount(0);
  },
);

test("a person's OCR text is never read over: typed at upload, it stays after the reading, with no Read text again", async ({
  page,
  signIn,
  db,
}, info) => {
  await signIn("ocrOwn");
  const projectId = await ownProject(db, "ocrOwn", info);
  await uploadReceipt(page, projectId, "Typed by a person");
  const id = await receiptId(db, projectId);
  await readingsFinished(db, id);

  await page.goto(`/image/${id}`);
  await expect(page.locator(".ocr")).toHaveText("Typed by a person");
  await expect(page.getByText("Read from the picture by Koala.")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Read text again" })).toHaveCount(0);
  expect(await db.selectFrom("images").select(["ocr_text", "ocr_by_machine"]).where("id", "=", id).executeTakeFirstOrThrow()).toEqual({
    ocr_text: "Typed by a person",
    ocr_by_machine: 0,
  });
  await expectAccessible(page, info);
});
