import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError } from "~/models/actor";
import { createBoard, getBoard, searchBoards } from "~/models/boards.server";
import { gridPage } from "~/models/grid.server";
import { findImageObject, getImage, insertImage } from "~/models/images.server";
import { getProject, listProjects } from "~/models/projects.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { fakeFile, makeProject, makeUser, meta } from "../helpers/fixtures";

describe.each(dialects)("access control in the models (%s)", (dialect) => {
  let t: TestDatabase;
  let alice: Awaited<ReturnType<typeof makeUser>>;
  let bob: Awaited<ReturnType<typeof makeUser>>;
  let viewer: Awaited<ReturnType<typeof makeUser>>;
  let admin: Awaited<ReturnType<typeof makeUser>>;
  let mine: Awaited<ReturnType<typeof makeProject>>;
  let theirs: Awaited<ReturnType<typeof makeProject>>;
  let myImage: number;
  let theirImage: number;
  let myBoard: string;
  let theirBoard: string;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    alice = await makeUser();
    bob = await makeUser();
    viewer = await makeUser();
    admin = await makeUser("admin");
    mine = await makeProject([{ actor: alice.actor }, { actor: viewer.actor, role: "viewer" }]);
    theirs = await makeProject([{ actor: bob.actor }]);
    myImage = await insertImage(alice.actor, mine.id, fakeFile(1), meta("mine"));
    theirImage = await insertImage(bob.actor, theirs.id, fakeFile(2), meta("theirs"));
    myBoard = (await createBoard(alice.actor, { projectId: mine.id, title: "Mine", imageIds: [myImage] })).id;
    theirBoard = (await createBoard(bob.actor, { projectId: theirs.id, title: "Theirs", imageIds: [theirImage] })).id;
  });
  afterAll(() => t.drop());

  const boardsOf = async (actor: typeof alice.actor) => (await searchBoards(actor, { limit: 100 })).boards;

  it("lists only the projects a user is a member of; admins see all", async () => {
    expect((await listProjects(alice.actor)).map((p) => p.id)).toEqual([mine.id]);
    expect((await listProjects(bob.actor)).map((p) => p.id)).toEqual([theirs.id]);
    expect((await listProjects(admin.actor)).map((p) => p.id).sort()).toEqual([mine.id, theirs.id].sort());
  });

  it("answers not found for another project, board or image, never its data", async () => {
    await expect(getProject(alice.actor, theirs.id)).rejects.toThrow(new NotFoundError(`No Projects Found with ID: ${theirs.id}`));
    await expect(getBoard(alice.actor, theirBoard)).rejects.toThrow(`No Board Found with ID: ${theirBoard}`);
    await expect(getImage(alice.actor, theirImage)).rejects.toThrow("Image not found");
    expect(await findImageObject(alice.actor, theirImage, fakeFile(2).thumbKey)).toBeNull();
    await expect(gridPage(alice.actor, { kind: "project", projectId: theirs.id })).rejects.toBeInstanceOf(NotFoundError);
    await expect(getProject(alice.actor, Number.NaN)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("gives members their own things", async () => {
    expect((await getProject(alice.actor, mine.id)).id).toBe(mine.id);
    expect((await getBoard(alice.actor, myBoard)).title).toBe("Mine");
    expect((await getImage(alice.actor, myImage)).keywords).toEqual([]);
    expect(await findImageObject(alice.actor, myImage, fakeFile(1).thumbKey)).toMatchObject({ mimeType: "image/webp" });
    expect(await findImageObject(alice.actor, myImage, fakeFile(1).storageKey)).toMatchObject({ mimeType: "image/jpeg" });
    expect(await findImageObject(alice.actor, myImage, fakeFile(2).thumbKey)).toBeNull();
    expect((await boardsOf(alice.actor)).map((b) => b.id)).toEqual([myBoard]);
    expect((await boardsOf(admin.actor)).length).toBe(2);
  });

  it("searches boards by title, literally, within the member's projects", async () => {
    await createBoard(alice.actor, { projectId: mine.id, title: "100% juice_test" });
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

  it("lets viewers read but not write, and refuses writes into other projects", async () => {
    expect((await getImage(viewer.actor, myImage)).id).toBe(myImage);
    await expect(insertImage(viewer.actor, mine.id, fakeFile(3), meta("x"))).rejects.toBeInstanceOf(NotFoundError);
    await expect(insertImage(alice.actor, theirs.id, fakeFile(4), meta("x"))).rejects.toBeInstanceOf(NotFoundError);
    await expect(createBoard(alice.actor, { projectId: theirs.id, title: "Sneaky" })).rejects.toBeInstanceOf(NotFoundError);
    // An image of another project cannot be smuggled into one's own board.
    await expect(createBoard(alice.actor, { projectId: mine.id, title: "Mixed", imageIds: [myImage, theirImage] })).rejects.toBeInstanceOf(NotFoundError);
    expect((await boardsOf(alice.actor)).map((b) => b.title)).not.toContain("Mixed");
  });
});
