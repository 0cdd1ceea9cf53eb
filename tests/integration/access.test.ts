import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotAllowedError, NotFoundError } from "~/lib/errors";
import { createBoard, searchBoards } from "~/models/boards.server";
import { findImageObject, insertImage } from "~/models/images.server";
import { listProjects } from "~/models/projects.server";
import {
  boardScope,
  clientNotFound,
  imageScope,
  parseId,
  projectScope,
  requireEdit,
  requireManage,
  type ProjectScope,
} from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { fakeFile, makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

describe.each(dialects)("access control: scopes resolved once, enforced in the models (%s)", (dialect) => {
  let t: TestDatabase;
  let alice: Awaited<ReturnType<typeof makeUser>>;
  let bob: Awaited<ReturnType<typeof makeUser>>;
  let viewer: Awaited<ReturnType<typeof makeUser>>;
  let manager: Awaited<ReturnType<typeof makeUser>>;
  let admin: Awaited<ReturnType<typeof makeUser>>;
  let mine: Awaited<ReturnType<typeof makeProject>>;
  let theirs: Awaited<ReturnType<typeof makeProject>>;
  let aliceScope: ProjectScope;
  let myImage: number;
  let theirImage: number;
  let myBoard: string;
  let theirBoard: string;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    alice = await makeUser();
    bob = await makeUser();
    viewer = await makeUser();
    manager = await makeUser();
    admin = await makeUser("admin");
    mine = await makeProject([{ actor: alice.actor }, { actor: viewer.actor, role: "viewer" }, { actor: manager.actor, role: "manager" }]);
    theirs = await makeProject([{ actor: bob.actor }]);
    aliceScope = await projectScope(alice.actor, mine.id);
    const bobScope = await projectScope(bob.actor, theirs.id);
    myImage = await insertImage(aliceScope, await storedFakeFile(1), meta("mine"));
    theirImage = await insertImage(bobScope, await storedFakeFile(2), meta("theirs"));
    myBoard = (await createBoard(aliceScope, { title: "Mine", imageIds: [myImage] })).id;
    theirBoard = (await createBoard(bobScope, { title: "Theirs", imageIds: [theirImage] })).id;
  });
  afterAll(() => t.drop());

  const boardsOf = async (actor: typeof alice.actor) => (await searchBoards(actor, { limit: 100 })).boards;

  it("lists only the projects a user is a member of; admins see all", async () => {
    expect((await listProjects(alice.actor)).map((p) => p.id)).toEqual([mine.id]);
    expect((await listProjects(bob.actor)).map((p) => p.id)).toEqual([theirs.id]);
    expect((await listProjects(admin.actor)).map((p) => p.id).sort()).toEqual([mine.id, theirs.id].sort());
  });

  it("answers not found for another project, board or image, never its data", async () => {
    await expect(projectScope(alice.actor, theirs.id)).rejects.toThrow(new NotFoundError(`No Projects Found with ID: ${theirs.id}`));
    await expect(boardScope(alice.actor, theirBoard)).rejects.toThrow(`No Board Found with ID: ${theirBoard}`);
    await expect(imageScope(alice.actor, theirImage)).rejects.toThrow("Image not found");
    expect(await findImageObject(alice.actor, theirImage, fakeFile(2).thumbKey)).toBeNull();
  });

  it("echoes a malformed or out-of-range id as typed instead of NaN or a rounded number", async () => {
    await expect(projectScope(alice.actor, "abc")).rejects.toThrow("No Projects Found with ID: abc");
    await expect(projectScope(alice.actor, "12345678901234567890")).rejects.toThrow("No Projects Found with ID: 12345678901234567890");
    await expect(projectScope(alice.actor, `${mine.id}.0`)).rejects.toThrow(`No Projects Found with ID: ${mine.id}.0`);
    await expect(imageScope(alice.actor, "1e3")).rejects.toThrow("Image not found");
    expect([
      parseId("12"),
      parseId(" 7 "),
      parseId("0"),
      parseId("-3"),
      parseId("1.5"),
      parseId("NaN"),
      parseId("9007199254740993"),
    ]).toEqual([12, 7, null, null, null, null, null]);
  });

  it("finds a board only under its own project id", async () => {
    expect((await boardScope(alice.actor, myBoard, String(mine.id))).board.title).toBe("Mine");
    await expect(boardScope(alice.actor, myBoard, String(theirs.id))).rejects.toThrow(`No Board Found with ID: ${myBoard}`);
    await expect(boardScope(admin.actor, myBoard, "nope")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("gives members their own things, with the role's permissions", async () => {
    const scope = await projectScope(alice.actor, mine.id);
    expect(scope).toMatchObject({ role: "editor", can: { edit: true, manage: false, select: true }, project: { id: mine.id } });
    expect((await projectScope(viewer.actor, mine.id)).can).toMatchObject({ edit: false, manage: false, download: true });
    expect((await projectScope(manager.actor, mine.id)).can).toMatchObject({ edit: true, manage: true });
    expect((await projectScope(admin.actor, theirs.id)).role).toBe("admin");
    expect((await boardScope(alice.actor, myBoard)).board.title).toBe("Mine");
    expect((await imageScope(alice.actor, myImage)).image.title).toBe("mine");
    expect(await findImageObject(alice.actor, myImage, fakeFile(1).thumbKey)).toMatchObject({ mimeType: "image/webp" });
    expect(await findImageObject(alice.actor, myImage, fakeFile(1).storageKey)).toMatchObject({ mimeType: "image/jpeg" });
    expect(await findImageObject(alice.actor, myImage, fakeFile(2).thumbKey)).toBeNull();
    expect(await findImageObject(admin.actor, theirImage, fakeFile(2).thumbKey)).not.toBeNull();
    expect((await boardsOf(alice.actor)).map((b) => b.id)).toEqual([myBoard]);
    expect((await boardsOf(admin.actor)).length).toBe(2);
  });

  it("searches boards by title, literally, within the member's projects", async () => {
    await createBoard(aliceScope, { title: "100% juice_test" });
    const titles = async (q: string) => (await searchBoards(alice.actor, { q, limit: 50 })).boards.map((b) => b.title);
    expect(await titles("JUICE")).toEqual(["100% juice_test"]);
    expect(await titles("0%")).toEqual(["100% juice_test"]);
    expect(await titles("e_t")).toEqual(["100% juice_test"]);
    expect(await titles("%")).toEqual(["100% juice_test"]);
    expect(await titles("eirs")).toEqual([]); // "Theirs" belongs to another project
    const page = await searchBoards(alice.actor, { limit: 1 });
    expect(page.more).toBe(true);
    expect(page.boards[0]).toMatchObject({ projectName: mine.name });
  });

  it("lets viewers read but not write: a 403 saying what is true, with a link to the project or board they can open", async () => {
    const viewerScope = await projectScope(viewer.actor, mine.id);
    expect((await imageScope(viewer.actor, myImage)).image.id).toBe(myImage);
    const refusal = { status: 403, message: "You can view this project but not change it." };
    const toProject = { href: `/client/${mine.id}`, label: `Open ${mine.name}` };
    await expect(insertImage(viewerScope, await storedFakeFile(3), meta("x"))).rejects.toMatchObject({
      ...refusal,
      more: { link: toProject },
    });
    await expect(createBoard(viewerScope, { title: "Viewer board" })).rejects.toBeInstanceOf(NotAllowedError);
    // The image pages resolve the image's project: the same answer.
    const imagePage = (await imageScope(viewer.actor, myImage)).scope;
    expect(() => requireEdit(imagePage)).toThrow(refusal.message);
    const onBoard = await boardScope(viewer.actor, myBoard);
    expect(() => requireEdit(onBoard)).toThrow(
      expect.objectContaining({
        status: 403,
        message: "You can view this board but not change it.",
        more: { link: { href: `/${mine.id}/board/${myBoard}`, label: "Open Mine" } },
      }),
    );
    // Managing: a viewer is told they cannot change it, an editor that they cannot manage it.
    expect(() => requireManage(viewerScope)).toThrow(refusal.message);
    expect(() => requireManage(aliceScope)).toThrow(
      expect.objectContaining({ status: 403, message: "You can edit this project but not manage it.", more: { link: toProject } }),
    );
    expect(requireManage(await projectScope(manager.actor, mine.id)).project.id).toBe(mine.id);
  });

  it("tells a stranger nothing: another project's id and an unknown one answer alike (the upload pages in the spec's words)", async () => {
    for (const id of [theirs.id, 987654]) {
      await expect(projectScope(alice.actor, id)).rejects.toThrow(new NotFoundError(`No Projects Found with ID: ${id}`));
      await expect(projectScope(alice.actor, id, clientNotFound)).rejects.toMatchObject({
        status: 404,
        message: "Client not found",
        more: { detail: `No Client with ID ${id} found. Please select a client from the dashboard.` },
      });
    }
  });

  it("never lets an image of another project into a board", async () => {
    await expect(createBoard(aliceScope, { title: "Mixed", imageIds: [myImage, theirImage] })).rejects.toBeInstanceOf(NotFoundError);
    expect((await boardsOf(alice.actor)).map((b) => b.title)).not.toContain("Mixed");
  });

  it("refuses to commit an image whose objects are not recorded as stored", async () => {
    await expect(insertImage(aliceScope, fakeFile(99), meta("no objects"))).rejects.toThrow(/Stored object missing/);
  });
});
