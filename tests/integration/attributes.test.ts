import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { ATTRIBUTE_MESSAGES } from "~/lib/attribute-rules";
import {
  assignAttribute,
  assignAttributeBulk,
  attributesOf,
  createAttribute,
  deleteAttribute,
  removeAttributeValue,
  setAttributeValues,
  updateAttributes,
} from "~/models/attributes.server";
import { createBoard } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { boardScope, projectScope } from "~/models/scope.server";
import { runBulk } from "~/services/bulk.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

/**
 * Attributes in the models, on both dialects: who may do what (managers change attributes, editors assign values,
 * viewers and strangers get the project's 404), the spec's refusals, and that a refused write changes nothing.
 */
describe.each(dialects)("attributes (%s)", (dialect) => {
  let t: TestDatabase;
  let manager: Awaited<ReturnType<typeof makeUser>>;
  let editor: Awaited<ReturnType<typeof makeUser>>;
  let viewer: Awaited<ReturnType<typeof makeUser>>;
  let stranger: Awaited<ReturnType<typeof makeUser>>;
  let projectId: number;
  let otherProjectId: number;
  let images: number[];
  let foreignImage: number;
  let file = 100;
  const managerScope = () => projectScope(manager.actor, projectId);
  const editorScope = () => projectScope(editor.actor, projectId);
  const valuesOf = async (attributeId: number) =>
    Object.fromEntries(
      (await db().selectFrom("image_attribute_values").select(["image_id", "value"]).where("attribute_id", "=", attributeId).execute()).map(
        (r) => [r.image_id, r.value],
      ),
    );
  const version = async () =>
    (await db().selectFrom("projects").select("updated_at").where("id", "=", projectId).executeTakeFirstOrThrow()).updated_at;
  const snapshot = async () => ({
    attributes: await db().selectFrom("attributes").selectAll().where("project_id", "=", projectId).orderBy("id").execute(),
    values: await db().selectFrom("image_attribute_values").selectAll().orderBy("image_id").orderBy("attribute_id").execute(),
  });

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    [manager, editor, viewer, stranger] = [await makeUser(), await makeUser(), await makeUser(), await makeUser()];
    const project = await makeProject([
      { actor: manager.actor, role: "manager" },
      { actor: editor.actor, role: "editor" },
      { actor: viewer.actor, role: "viewer" },
    ]);
    projectId = project.id;
    otherProjectId = (await makeProject([{ actor: stranger.actor, role: "manager" }])).id;
    images = [];
    for (let i = 0; i < 4; i++) images.push(await insertImage(await editorScope(), await storedFakeFile(file++), meta(`Image ${i}`)));
    foreignImage = await insertImage(await projectScope(stranger.actor, otherProjectId), await storedFakeFile(file++), meta("Theirs"));
  });
  afterAll(async () => {
    await t.drop();
  });
  beforeEach(async () => {
    await db().deleteFrom("image_attribute_values").execute();
    await db().deleteFrom("attributes").execute();
  });

  it("creates a user attribute for a manager; a name the project has in any case is a 409; editors and viewers a 403 saying what they may do, strangers the project's 404", async () => {
    const id = await createAttribute(await managerScope(), { name: "Channel", type: 3 });
    expect(await attributesOf(await managerScope())).toEqual([{ id, name: "Channel", code: "Channel", active: true, type: 3 }]);
    await expect(createAttribute(await managerScope(), { name: "CHANNEL", type: 3 })).rejects.toMatchObject({
      status: 409,
      message: ATTRIBUTE_MESSAGES.exists,
    });
    for (const [actor, message] of [
      [editor.actor, "You can edit this project but not manage it."],
      [viewer.actor, "You can view this project but not change it."],
    ] as const)
      await expect(createAttribute(await projectScope(actor, projectId), { name: "Region", type: 3 })).rejects.toMatchObject({
        status: 403,
        message,
      });
    await expect(projectScope(stranger.actor, projectId)).rejects.toMatchObject({ status: 404 });
    expect(await attributesOf(await managerScope())).toHaveLength(1);
  });

  it("creates the 34th attribute inactive: at most 33 are active", async () => {
    for (let i = 0; i < 33; i++) await createAttribute(await managerScope(), { name: `A${i}`, type: 3 });
    const extra = await createAttribute(await managerScope(), { name: "Extra", type: 3 });
    const list = await attributesOf(await managerScope());
    expect(list.filter((a) => a.active)).toHaveLength(33);
    expect(list.find((a) => a.id === extra)?.active).toBe(false);
  });

  it("saves only the rows that changed, swaps two names in one save, and moves the project's version on", async () => {
    const a = await createAttribute(await managerScope(), { name: "Alpha", type: 3 });
    const b = await createAttribute(await managerScope(), { name: "Beta", type: 3 });
    const before = await version();
    const saved = await updateAttributes(await managerScope(), [
      { id: a, name: "Beta", code: "beta_code", active: true },
      { id: b, name: "Alpha", code: "Beta", active: false },
    ]);
    expect(saved).toBe(2);
    expect(await attributesOf(await managerScope())).toEqual([
      { id: a, name: "Beta", code: "beta_code", active: true, type: 3 },
      { id: b, name: "Alpha", code: "Beta", active: false, type: 3 },
    ]);
    expect(await version()).toBeGreaterThan(before);
    const unchanged = await version();
    expect(await updateAttributes(await managerScope(), [{ id: a, name: "Beta", code: "beta_code", active: true }])).toBe(0);
    expect(await version()).toBe(unchanged);
  });

  it("refuses a save that would duplicate a name, pass 33 active or touch another project's attribute, and changes nothing", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 34; i++) ids.push(await createAttribute(await managerScope(), { name: `A${i}`, type: 3 }));
    const foreign = await createAttribute(await projectScope(stranger.actor, otherProjectId), { name: "Foreign", type: 3 });
    const before = await snapshot();
    await expect(
      updateAttributes(await managerScope(), [
        { id: ids[0]!, name: "Renamed", code: "x", active: true },
        { id: ids[33]!, name: "A33", code: "A33", active: true },
      ]),
    ).rejects.toMatchObject({ status: 400, message: ATTRIBUTE_MESSAGES.activeLimit });
    await expect(updateAttributes(await managerScope(), [{ id: ids[1]!, name: "a2", code: "A1", active: true }])).rejects.toMatchObject({
      status: 409,
      message: ATTRIBUTE_MESSAGES.duplicate,
    });
    await expect(
      updateAttributes(await managerScope(), [
        { id: ids[1]!, name: "Fine", code: "A1", active: true },
        { id: foreign, name: "Mine", code: "Mine", active: true },
      ]),
    ).rejects.toMatchObject({ status: 404 });
    await expect(updateAttributes(await editorScope(), [{ id: ids[1]!, name: "Fine", code: "A1", active: true }])).rejects.toMatchObject({
      status: 403,
    });
    expect(await snapshot()).toEqual(before);
  });

  it("deletes a user attribute with all its values; WSC and system attributes answer 'Cannot delete this attribute' and stay", async () => {
    const user = await createAttribute(await managerScope(), { name: "Mine", type: 3 });
    const wsc = await createAttribute(await managerScope(), { name: "Wsc", type: 1 });
    const system = await createAttribute(await managerScope(), { name: "System", type: 2 });
    await setAttributeValues(await managerScope(), [
      { imageId: images[0]!, attributeId: user, value: "x" },
      { imageId: images[0]!, attributeId: wsc, value: "y" },
    ]);
    for (const id of [wsc, system])
      await expect(deleteAttribute(await managerScope(), id)).rejects.toMatchObject({
        status: 400,
        message: ATTRIBUTE_MESSAGES.cannotDelete,
      });
    await expect(deleteAttribute(await editorScope(), user)).rejects.toMatchObject({ status: 403 });
    const before = await version();
    await deleteAttribute(await managerScope(), user);
    expect((await attributesOf(await managerScope())).map((a) => a.name)).toEqual(["Wsc", "System"]);
    expect(await valuesOf(user)).toEqual({});
    expect(await valuesOf(wsc)).toEqual({ [images[0]!]: "y" });
    expect(await version()).toBeGreaterThan(before);
  });

  it("assigns a value in the panel; a value already there answers 'Please remove existing attribute values first' unless replaced", async () => {
    const region = await createAttribute(await managerScope(), { name: "Region", type: 3 });
    await assignAttribute(await editorScope(), images[0]!, { attributeId: region, value: "North", replace: false });
    await expect(
      assignAttribute(await editorScope(), images[0]!, { attributeId: region, value: "South", replace: false }),
    ).rejects.toMatchObject({
      status: 409,
      message: ATTRIBUTE_MESSAGES.removeExisting,
    });
    expect(await valuesOf(region)).toEqual({ [images[0]!]: "North" });
    await assignAttribute(await editorScope(), images[0]!, { attributeId: region, value: "South", replace: true });
    expect(await valuesOf(region)).toEqual({ [images[0]!]: "South" });
  });

  it("refuses panel writes a person may not make: a viewer, another project's image, a WSC attribute, another project's attribute", async () => {
    const region = await createAttribute(await managerScope(), { name: "Region", type: 3 });
    const wsc = await createAttribute(await managerScope(), { name: "Wsc", type: 1 });
    const foreign = await createAttribute(await projectScope(stranger.actor, otherProjectId), { name: "Foreign", type: 3 });
    const viewerScope = await projectScope(viewer.actor, projectId);
    await expect(assignAttribute(viewerScope, images[0]!, { attributeId: region, value: "x", replace: false })).rejects.toMatchObject({
      status: 403,
    });
    await expect(
      assignAttribute(await editorScope(), foreignImage, { attributeId: region, value: "x", replace: false }),
    ).rejects.toMatchObject({
      status: 404,
    });
    for (const attributeId of [wsc, foreign])
      await expect(assignAttribute(await editorScope(), images[0]!, { attributeId, value: "x", replace: false })).rejects.toMatchObject({
        status: 404,
      });
    expect((await snapshot()).values).toEqual([]);
  });

  it("removes one image's value of a user attribute, and says so when there was none", async () => {
    const region = await createAttribute(await managerScope(), { name: "Region", type: 3 });
    await setAttributeValues(await managerScope(), [
      { imageId: images[0]!, attributeId: region, value: "North" },
      { imageId: images[1]!, attributeId: region, value: "North" },
    ]);
    expect(await removeAttributeValue(await editorScope(), images[0]!, region)).toBe(true);
    expect(await removeAttributeValue(await editorScope(), images[0]!, region)).toBe(false);
    expect(await removeAttributeValue(await editorScope(), foreignImage, region)).toBe(false);
    expect(await valuesOf(region)).toEqual({ [images[1]!]: "North" });
  });

  it("bulk assigns on a selection, set-based: images holding a value keep it and are counted, unless Replace", async () => {
    const region = await createAttribute(await managerScope(), { name: "Region", type: 3 });
    await setAttributeValues(await managerScope(), [{ imageId: images[0]!, attributeId: region, value: "North" }]);
    const kept = await assignAttributeBulk(
      await editorScope(),
      { all: true, ids: [images[3]!] },
      { attributeId: region, value: "East", replace: false },
    );
    expect(kept).toEqual({ affected: 2, skipped: 1 });
    expect(await valuesOf(region)).toEqual({ [images[0]!]: "North", [images[1]!]: "East", [images[2]!]: "East" });
    const replaced = await assignAttributeBulk(
      await editorScope(),
      { all: true, ids: [] },
      { attributeId: region, value: "East", replace: true },
    );
    expect(replaced).toEqual({ affected: 2, skipped: 2 });
    expect(Object.values(await valuesOf(region))).toEqual(["East", "East", "East", "East"]);
  });

  it("bulk assigns from a board to the board's images only, and a picked id outside the scope fails the whole request", async () => {
    const region = await createAttribute(await managerScope(), { name: "Region", type: 3 });
    const board = await createBoard(await editorScope(), { title: "Picks", imageIds: [images[1]!, images[2]!] });
    const onBoard = await boardScope(editor.actor, board.id, String(projectId));
    const run = await runBulk(onBoard, { all: true, ids: [] }, { op: "attributes", attributeId: region, value: "Shelf", replace: false });
    expect("outcome" in run && run.outcome).toEqual({ affected: 2, skipped: 0 });
    expect(await valuesOf(region)).toEqual({ [images[1]!]: "Shelf", [images[2]!]: "Shelf" });
    await expect(
      runBulk(
        await editorScope(),
        { all: false, ids: [images[0]!, foreignImage] },
        { op: "attributes", attributeId: region, value: "X", replace: true },
      ),
    ).rejects.toMatchObject({ status: 404 });
    expect(await valuesOf(region)).toEqual({ [images[1]!]: "Shelf", [images[2]!]: "Shelf" });
    await expect(
      runBulk(
        await projectScope(viewer.actor, projectId),
        { all: true, ids: [] },
        { op: "attributes", attributeId: region, value: "X", replace: true },
      ),
    ).rejects.toMatchObject({ status: 403 });
  });
});
