import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { idRanges } from "~/lib/ids";
import type { Actor } from "~/models/actor";
import { createAttribute, deleteAttribute } from "~/models/attributes.server";
import { auditPage } from "~/models/audit.server";
import { createBoard } from "~/models/boards.server";
import { deleteImagesBulk } from "~/models/bulk.server";
import { deleteImage } from "~/models/image-edits.server";
import { insertImage, insertImageRows } from "~/models/images.server";
import { queueReimport } from "~/models/reimport.server";
import { boardScope, imageScope, projectScope } from "~/models/scope.server";
import { createShareLinks, extendShareLink } from "~/models/share-links.server";
import { importCsvFile } from "~/services/attribute-import.server";
import { resumeScope, selectionJobRef } from "~/services/bulk.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

/**
 * Destructive and lasting actions leave an audit entry (who, from which address, on what): deleting images (one,
 * or a bulk delete as one entry with the count and the ids), creating and deleting attributes, importing attribute
 * values, starting a re-import, extending a share link. The admin console's filter finds them.
 */
describe.each(dialects)("audit of destructive actions (%s)", (dialect) => {
  let t: TestDatabase;
  let actor: Actor;
  let admin: Actor;
  let projectId: number;
  const ip = "203.0.113.7";
  const scope = () => projectScope(actor, projectId);
  /** The entries of an action, oldest first, as the console's filter finds them. */
  const entries = async (action: string) =>
    (await auditPage(admin, { action })).rows
      .reverse()
      .map((r) => ({ email: r.email, ip: r.ip, subject: r.subject, detail: JSON.parse(r.detail) as Record<string, unknown> }));
  let email: string;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const manager = await makeUser();
    email = manager.user.email;
    actor = { ...manager.actor, ip };
    admin = (await makeUser("admin")).actor;
    projectId = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
  });
  afterAll(() => t.drop());

  it("records a deleted image: who, from where, which image", async () => {
    const id = await insertImage(await scope(), await storedFakeFile(1), meta("Going"));
    const { image } = await imageScope(actor, id);
    await deleteImage(await scope(), image);
    expect(await entries("images.deleted")).toEqual([
      { email, ip, subject: `project:${projectId}`, detail: { count: 1, ids: String(id), title: "Going" } },
    ]);
  });

  it("records a bulk delete of 300 images as one entry with the count and the ids (as ranges), committed with it", async () => {
    const file = await storedFakeFile(2);
    await insertImageRows(
      await scope(),
      Array.from({ length: 300 }, (_, i) => ({ file, meta: meta(`Bulk ${i}`), at: 1_000 + i })),
    );
    const ids = (await db().selectFrom("images").select("id").where("project_id", "=", projectId).execute()).map((r) => r.id);
    expect(ids).toHaveLength(300);
    const before = (await db().selectFrom("audit_log").select("id").execute()).length;
    expect(await deleteImagesBulk(await scope(), { all: true, ids: [] })).toEqual({ affected: 300, skipped: 0 });
    expect((await db().selectFrom("audit_log").select("id").execute()).length).toBe(before + 1);
    const [, bulk] = await entries("images.deleted");
    expect(bulk).toEqual({ email, ip, subject: `project:${projectId}`, detail: { count: 300, ids: idRanges(ids) } });
    expect(bulk!.detail.ids).toMatch(/^\d+-\d+$/);
  });

  it("keeps the address of the request a background job (a large bulk action, an import) was started from", async () => {
    const { scope: resumed } = await resumeScope(selectionJobRef(await scope()));
    expect(resumed.actor).toMatchObject({ id: actor.id, ip });
  });

  it("records creating and deleting an attribute (with the values it took along)", async () => {
    const id = await createAttribute(await scope(), { name: "Mood", type: 3 });
    const image = await insertImage(await scope(), await storedFakeFile(3), meta("Moody"));
    await importCsvFile(await scope(), csv(`Image ID,Mood\n${image},Calm\n`), undefined, "moods.csv");
    await deleteAttribute(await scope(), id);
    expect(await entries("attribute.created")).toEqual([
      { email, ip, subject: `project:${projectId}`, detail: { attribute: id, name: "Mood", type: 3 } },
    ]);
    expect(await entries("attribute.deleted")).toEqual([
      { email, ip, subject: `project:${projectId}`, detail: { attribute: id, name: "Mood", values: 1 } },
    ]);
    expect(await entries("attributes.imported")).toEqual([
      { email, ip, subject: `project:${projectId}`, detail: { file: "moods.csv", rows: 1, values: 1 } },
    ]);
  });

  it("records a started re-import, and a share link extended (to never)", async () => {
    const job = await queueReimport(await scope(), "files");
    expect(await entries("reimport.started")).toEqual([{ email, ip, subject: `project:${projectId}`, detail: { job, kind: "files" } }]);
    const board = await createBoard(await scope(), { title: "Shared" });
    const asBoard = await boardScope(actor, board.id);
    const [link] = await createShareLinks(asBoard, [null], { expiry: "7", allowDownload: true, showMetadata: true });
    await extendShareLink(asBoard, link!.id, "never");
    expect(await entries("share.extended")).toEqual([
      { email, ip, subject: `board:${board.id}`, detail: { link: link!.id, expiry: "never" } },
    ]);
  });

  const dir = mkdtempSync(path.join(tmpdir(), "koala-audit-"));
  let n = 0;
  function csv(text: string) {
    const file = path.join(dir, `f-${n++}.csv`);
    writeFileSync(file, text);
    return file;
  }
});
