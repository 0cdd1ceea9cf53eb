import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { insertImage, lockProjectForImages } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { write } from "~/models/write.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, storedFakeFile } from "../helpers/fixtures";

/**
 * `write` runs a transaction again when PostgreSQL ends it to break a deadlock (write.server.ts). Every write takes
 * its project's row last (the version moves on); a delete takes it first. Two such writes on one image each hold
 * what the other waits for, and PostgreSQL ends one of them: the person's request got a 500 (an e2e run).
 */
describe.each(dialects.filter((d) => d === "postgres"))("a write ended by a deadlock (%s)", (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(() => t.drop());

  it("is run again, so both of two writes taking an image's row and its project's in opposite orders commit", async () => {
    const { actor } = await makeUser();
    const project = await makeProject([{ actor, role: "editor" }]);
    const scope = await projectScope(actor, project.id);
    const imageId = await insertImage(scope, await storedFakeFile(1), {
      title: "Both",
      description: "",
      keywords: [],
      ocrText: "",
      originalName: "b.jpg",
    });

    // Each write, on its first run, waits at the barrier until the other holds its first lock.
    let arrived = 0;
    let open = () => {};
    const barrier = new Promise<void>((resolve) => (open = resolve));
    const meet = async () => {
      if (++arrived === 2) open();
      await barrier;
    };
    const runs = { reading: 0, deleting: 0 };
    // As an OCR reading is saved: the image's row, then (the version) the project's.
    const reading = write(async (trx, touched) => {
      runs.reading += 1;
      await trx.updateTable("images").set({ ocr_text: "read" }).where("id", "=", imageId).execute();
      await meet();
      touched.project(project.id);
    });
    // As a delete: the project's row first, then the image's.
    const deleting = write(async (trx, touched) => {
      runs.deleting += 1;
      await lockProjectForImages(trx, project.id);
      await meet();
      await trx.updateTable("images").set({ title: "Renamed" }).where("id", "=", imageId).execute();
      touched.project(project.id);
    });

    await expect(Promise.all([reading, deleting])).resolves.toBeDefined();
    // PostgreSQL ended one of them once; it ran again and committed.
    expect(runs.reading + runs.deleting).toBe(3);
    expect(await db().selectFrom("images").select(["ocr_text", "title"]).where("id", "=", imageId).executeTakeFirst()).toEqual({
      ocr_text: "read",
      title: "Renamed",
    });
  });

  it("gives up on other errors at once: a write refused by a constraint runs once", async () => {
    const { actor } = await makeUser();
    const project = await makeProject([{ actor, role: "editor" }]);
    let runs = 0;
    await expect(
      write(async (trx) => {
        runs += 1;
        await trx
          .insertInto("project_members")
          .values({ project_id: project.id, user_id: actor.id, role: "viewer", created_at: 0 })
          .execute();
      }),
    ).rejects.toThrow(/duplicate key|unique/i);
    expect(runs).toBe(1);
  });
});
