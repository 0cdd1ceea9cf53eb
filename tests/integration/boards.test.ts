import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { ConflictError, InvalidError, NotAllowedError, NotFoundError } from "~/lib/errors";
import { createAttribute, updateAttributes } from "~/models/attributes.server";
import { createBoard, deleteBoard, pinImage, removeFromBoard, renameBoard, searchBoards, setCover } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { editProject } from "~/models/projects.server";
import { boardScope, projectScope, type ProjectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

describe.each(dialects)("boards: create, rename, delete, pin, cover, remove (%s)", (dialect) => {
  let t: TestDatabase;
  let editor: Awaited<ReturnType<typeof makeUser>>;
  let viewer: Awaited<ReturnType<typeof makeUser>>;
  let manager: Awaited<ReturnType<typeof makeUser>>;
  let projectId: number;
  let otherProjectId: number;
  let scope: ProjectScope;
  const images: number[] = [];
  let foreignImage: number;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    editor = await makeUser();
    viewer = await makeUser();
    manager = await makeUser();
    const other = await makeUser();
    projectId = (
      await makeProject([{ actor: editor.actor }, { actor: viewer.actor, role: "viewer" }, { actor: manager.actor, role: "manager" }])
    ).id;
    otherProjectId = (await makeProject([{ actor: other.actor }])).id;
    scope = await projectScope(editor.actor, projectId);
    for (let i = 0; i < 4; i++) images.push(await insertImage(scope, await storedFakeFile(100 + i), meta(`img ${i}`)));
    foreignImage = await insertImage(await projectScope(other.actor, otherProjectId), await storedFakeFile(199), meta("foreign"));
  });
  afterAll(() => t.drop());

  const boardsNamed = async (title: string) => db().selectFrom("boards").select("id").where("title", "=", title).execute();

  it("creates a board, refuses a name already in use whatever its case or padding, even when two try at once", async () => {
    const board = await createBoard(scope, { title: "  Shelf Study " });
    expect(board.title).toBe("Shelf Study");
    await expect(createBoard(scope, { title: "shelf study" })).rejects.toThrow(new ConflictError("Board name already exists"));
    const racing = await Promise.allSettled([createBoard(scope, { title: "Racing" }), createBoard(scope, { title: "RACING" })]);
    expect(racing.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect((racing.find((r) => r.status === "rejected") as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
    // The same name in another project is fine.
    const other = await makeUser();
    const elsewhere = (await makeProject([{ actor: other.actor }])).id;
    await expect(createBoard(await projectScope(other.actor, elsewhere), { title: "Shelf Study" })).resolves.toMatchObject({
      title: "Shelf Study",
    });
  });

  it("renames a board (its own name in another case is no clash) and refuses a taken one", async () => {
    const a = await createBoard(scope, { title: "Alpha" });
    await createBoard(scope, { title: "Beta" });
    const alpha = await boardScope(editor.actor, a.id);
    await renameBoard(alpha, "ALPHA");
    expect((await boardScope(editor.actor, a.id)).board.title).toBe("ALPHA");
    await expect(renameBoard(await boardScope(editor.actor, a.id), "beta")).rejects.toBeInstanceOf(ConflictError);
    expect((await boardScope(editor.actor, a.id)).board.title).toBe("ALPHA");
  });

  it("pins an image (success, then exists), takes the first pinned image as cover, and refuses client-level boards", async () => {
    const board = await createBoard(scope, { title: "Pins" });
    expect(board.cover_image_id).toBeNull();
    expect(await pinImage(scope, images[1]!, board.id)).toEqual({ status: "success", board: "Pins" });
    expect(await pinImage(scope, images[1]!, board.id)).toEqual({ status: "exists", board: "Pins" });
    expect(await pinImage(scope, images[2]!, board.id)).toEqual({ status: "success", board: "Pins" });
    expect((await boardScope(editor.actor, board.id)).board.coverImageId).toBe(images[1]);
    const shared = await createBoard(scope, { title: "Client review", clientBoard: true });
    await expect(pinImage(scope, images[1]!, shared.id)).rejects.toBeInstanceOf(InvalidError);
    await expect(pinImage(scope, foreignImage, board.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("sets a cover among the board's images only, and picks the next one when the cover leaves", async () => {
    const board = await createBoard(scope, { title: "Covers", imageIds: [images[0]!, images[1]!, images[2]!] });
    const b = await boardScope(editor.actor, board.id);
    await setCover(b, images[2]!);
    expect((await boardScope(editor.actor, board.id)).board.coverImageId).toBe(images[2]);
    await expect(setCover(b, images[3]!)).rejects.toBeInstanceOf(NotFoundError);
    expect(await removeFromBoard(b, images[2]!)).toBe(true);
    expect(await removeFromBoard(b, images[2]!)).toBe(false); // 'Image already removed, please refresh'
    expect((await boardScope(editor.actor, board.id)).board.coverImageId).toBe(images[0]);
  });

  it("deletes a board with its pins, never its images", async () => {
    const board = await createBoard(scope, { title: "Doomed", imageIds: [images[0]!] });
    await deleteBoard(await boardScope(editor.actor, board.id));
    expect(await boardsNamed("Doomed")).toHaveLength(0);
    expect(await db().selectFrom("board_images").select("image_id").where("board_id", "=", board.id).execute()).toHaveLength(0);
    expect(await db().selectFrom("images").select("id").where("id", "=", images[0]!).execute()).toHaveLength(1);
  });

  it("moves a board's version on with every change (the freshness check follows it)", async () => {
    const board = await createBoard(scope, { title: "Versions" });
    const v0 = (await boardScope(editor.actor, board.id)).board.version;
    await pinImage(scope, images[0]!, board.id);
    const v1 = (await boardScope(editor.actor, board.id)).board.version;
    await renameBoard(await boardScope(editor.actor, board.id), "Versions 2");
    const v2 = (await boardScope(editor.actor, board.id)).board.version;
    expect(v1).toBeGreaterThan(v0);
    expect(v2).toBeGreaterThan(v1);
  });

  it("lists a member's boards newest change first; boards moved on together (a rename of the project's attribute) in title order", async () => {
    const own = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const ownScope = await projectScope(manager.actor, own);
    for (const title of ["cherry", "Apple", "banana"]) await createBoard(ownScope, { title });
    const titles = async () => (await searchBoards(manager.actor, { projectId: own, limit: 10 })).boards.map((b) => b.title);
    // A version is a millisecond (or one past the board's own): the clock moves past the boards' before the write.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const attribute = await createAttribute(ownScope, { name: "Region", type: 3 });
    await updateAttributes(ownScope, [{ id: attribute, name: "Area", code: "Area", active: true }]);
    const versions = await db().selectFrom("boards").select("updated_at").distinct().where("project_id", "=", own).execute();
    expect(versions).toHaveLength(1); // one version for all three: the order falls to the titles
    expect(await titles()).toEqual(["Apple", "banana", "cherry"]);
    await renameBoard(await boardScope(manager.actor, (await boardsNamed("cherry"))[0]!.id), "Cherry pie");
    expect(await titles()).toEqual(["Cherry pie", "Apple", "banana"]);
  });

  it("lets viewers do none of it (a 403 saying so), and only managers rename the project", async () => {
    const viewing = await projectScope(viewer.actor, projectId);
    const board = await createBoard(scope, { title: "Viewer target" });
    await expect(createBoard(viewing, { title: "Nope" })).rejects.toThrow("You can view this project but not change it.");
    await expect(pinImage(viewing, images[0]!, board.id)).rejects.toBeInstanceOf(NotAllowedError);
    const asViewer = await boardScope(viewer.actor, board.id);
    await expect(renameBoard(asViewer, "Hijacked")).rejects.toThrow("You can view this board but not change it.");
    await expect(deleteBoard(asViewer)).rejects.toBeInstanceOf(NotAllowedError);
    await expect(editProject(scope, "Editor rename")).rejects.toThrow("You can edit this project but not manage it.");
    await editProject(await projectScope(manager.actor, projectId), "Managed Name");
    expect((await projectScope(editor.actor, projectId)).project.name).toBe("Managed Name");
    await expect(boardScope(editor.actor, board.id, String(otherProjectId))).rejects.toBeInstanceOf(NotFoundError);
  });
});
