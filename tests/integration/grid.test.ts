import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { NotFoundError } from "~/lib/errors";
import { createBoard } from "~/models/boards.server";
import { cursorBefore, decodeCursor, gridPage, gridTotal, idsInScope } from "~/models/grid.server";
import { deleteImage } from "~/models/image-edits.server";
import { insertImage, insertImageRows } from "~/models/images.server";
import { boardScope, imageScope, projectScope, scopeVersion, type GridScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile, fakeFile } from "../helpers/fixtures";

/** Every id of a scope, in grid order, by walking its pages. */
async function gridIds(scope: GridScope): Promise<number[]> {
  const ids: number[] = [];
  let after: string | null = null;
  do {
    const page = await gridPage(scope, { after: decodeCursor(after), limit: 300 });
    ids.push(...page.cards.map((c) => c.id));
    after = page.next;
  } while (after);
  return ids;
}

describe.each(dialects)("image grid paging (%s)", (dialect) => {
  let t: TestDatabase;
  let owner: Awaited<ReturnType<typeof makeUser>>;
  let stranger: Awaited<ReturnType<typeof makeUser>>;
  let projectId: number;
  let boardId: string;
  let boardIds: number[];
  /** Resolved afresh each time, as every request does: the version moves on with each write. */
  const scope = () => projectScope(owner.actor, projectId);
  const board = () => boardScope(owner.actor, boardId);
  const T0 = 1_700_000_000_000;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    owner = await makeUser();
    stranger = await makeUser();
    const project = await makeProject([{ actor: owner.actor }]);
    projectId = project.id;
    await makeProject([{ actor: stranger.actor }]);
    // 250 images, created in an order unlike their ids (i·101 mod 250), three to a timestamp so the id tiebreak matters.
    await insertImageRows(
      await scope(),
      Array.from({ length: 250 }, (_, i) => ({
        file: fakeFile(i),
        meta: meta(`img ${i}`, ["a", "b", "c", "d", "e", "f"]),
        at: T0 + Math.floor(((i * 101) % 250) / 3) * 1000,
      })),
    );
    // The board holds 40 images added in an order of their own (every seventh of the project's, wrapping round),
    // a second apart, the last one newest; two of them in the same millisecond. So the order they were added in
    // is neither the images' age nor their ids. (createBoard stamps one batch a millisecond apart in database
    // order; the added_at values are set here so the test says which order it expects.)
    const ids = (await db().selectFrom("images").select("id").where("project_id", "=", projectId).orderBy("id").execute()).map((r) => r.id);
    boardIds = Array.from({ length: 40 }, (_, k) => ids[(k * 7) % ids.length]!);
    boardId = (await createBoard(await scope(), { title: "B", imageIds: boardIds })).id;
    for (const [k, imageId] of boardIds.entries())
      await db()
        .updateTable("board_images")
        .set({ added_at: T0 + (k === 11 ? 10 : k) * 1000 })
        .where("board_id", "=", boardId)
        .where("image_id", "=", imageId)
        .execute();
  });
  afterAll(() => t.drop());

  async function walk(s: () => Promise<GridScope>, limit: number, during?: (page: number) => Promise<void>) {
    const seen: number[] = [];
    let after: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const res = await gridPage(await s(), { after: decodeCursor(after), limit });
      seen.push(...res.cards.map((c) => c.id));
      await during?.(page);
      if (!res.next) break;
      after = res.next;
    }
    return seen;
  }

  it("returns every image exactly once, newest first (created_at, then id), with the first five keywords", async () => {
    const seen = await walk(scope, 37);
    expect(await gridTotal(await scope())).toBe(250);
    // The order, worked out here rather than by the database: newest first, the higher id first within a millisecond.
    const rows = await db().selectFrom("images").select(["id", "created_at"]).where("project_id", "=", projectId).execute();
    const expected = [...rows].sort((a, b) => b.created_at - a.created_at || b.id - a.id).map((r) => r.id);
    expect(seen).toEqual(expected);
    // The data tells the orders apart: creation order is not id order, and timestamps are shared.
    expect(expected).not.toEqual([...expected].sort((a, b) => b - a));
    expect(new Set(rows.map((r) => r.created_at)).size).toBeLessThan(rows.length);
    const first = await gridPage(await scope(), { limit: 1 });
    expect(first.cards[0]).toMatchObject({ id: expected[0], keywords: ["a", "b", "c", "d", "e"] });
    expect(first.prev).toBeNull();
  });

  it("still returns every earlier image exactly once while new images arrive during paging", async () => {
    const before = new Set(await gridIds(await scope()));
    let n = 1000;
    const seen = await walk(scope, 25, async () => {
      n += 1;
      await insertImage(await scope(), await storedFakeFile(n), meta(`new ${n}`), { at: Date.now() });
    });
    const seenBefore = seen.filter((id) => before.has(id));
    expect(seenBefore).toHaveLength(before.size);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("keeps the count right across writes in the same millisecond (counts are cached per version)", async () => {
    const total = await gridTotal(await scope());
    const at = Date.now();
    const v0 = scopeVersion(await scope());
    const a = await insertImage(await scope(), await storedFakeFile(5001), meta("same ms 1"), { at });
    const v1 = scopeVersion(await scope());
    expect(await gridTotal(await scope())).toBe(total + 1);
    await insertImage(await scope(), await storedFakeFile(5002), meta("same ms 2"), { at });
    const v2 = scopeVersion(await scope());
    expect(new Set([v0, v1, v2]).size).toBe(3);
    expect(await gridTotal(await scope())).toBe(total + 2);
    const { scope: imageIn, image } = await imageScope(owner.actor, a);
    await deleteImage(imageIn, image);
    expect(await gridTotal(await scope())).toBe(total + 1);
  });

  it("pages backwards to exactly the previous page", async () => {
    const s = await scope();
    const p1 = await gridPage(s, { limit: 20 });
    const p2 = await gridPage(s, { after: decodeCursor(p1.next), limit: 20 });
    const back = await gridPage(s, { before: decodeCursor(p2.prev), limit: 20 });
    expect(back.cards.map((c) => c.id)).toEqual(p1.cards.map((c) => c.id));
    expect(back.prev).toBeNull();
    expect(back.next).toBe(p1.next);
  });

  it("finds the cursor of any position for a jump, down to the last image", async () => {
    const s = await scope();
    const ordered = await gridIds(s);
    const total = await gridTotal(s);
    expect(ordered).toHaveLength(total);
    for (const index of [1, 57, total - 1]) {
      const page = await gridPage(s, { after: await cursorBefore(s, index), limit: 3 });
      expect(page.cards[0]!.id).toBe(ordered[index]);
    }
    expect(await cursorBefore(s, 0)).toBeNull();
  });

  it("pages a board newest addition first (added_at, then image id)", async () => {
    const seen = await walk(board, 7);
    expect(await gridTotal(await board())).toBe(40);
    // The last added first; the two added in the same millisecond (positions 10 and 11) higher image id first.
    const [a, b] = [boardIds[10]!, boardIds[11]!];
    const expected = [...boardIds].reverse();
    expected.splice(40 - 12, 2, Math.max(a, b), Math.min(a, b));
    expect(seen).toEqual(expected);
    // Not the order of the images' own age, nor of their ids: the test tells the orders apart.
    expect(seen).not.toEqual([...seen].sort((x, y) => y - x));
  });

  it("gives each project and board its own rows, though their pages run one statement built once (statements.server.ts)", async () => {
    // The owner's pages have built the statements of these shapes; the stranger's project and a second board run them.
    const mine = await gridPage(await scope(), { limit: 300 });
    expect(mine.cards).toHaveLength(await gridTotal(await scope()));
    const theirs = await projectScope(
      stranger.actor,
      (await db().selectFrom("projects").select("id").where("id", "!=", projectId).executeTakeFirstOrThrow()).id,
    );
    expect((await gridPage(theirs, { limit: 300 })).cards).toEqual([]);
    const otherIds = mine.cards.slice(3, 8).map((c) => c.id);
    const other = await createBoard(await scope(), { title: "Other", imageIds: otherIds });
    const firstBoard = await gridPage(await board(), { limit: 300 });
    const secondBoard = await gridPage(await boardScope(owner.actor, other.id), { limit: 300 });
    expect(firstBoard.cards.map((c) => c.id).sort()).toEqual([...boardIds].sort());
    expect(secondBoard.cards.map((c) => c.id).sort()).toEqual([...otherIds].sort());
    // After a cursor too: the next page of the second board holds the rest of its own images only.
    const half = await gridPage(await boardScope(owner.actor, other.id), { limit: 2 });
    const rest = await gridPage(await boardScope(owner.actor, other.id), { after: decodeCursor(half.next), limit: 300 });
    expect([...half.cards, ...rest.cards].map((c) => c.id).sort()).toEqual([...otherIds].sort());
  });

  it("answers not found for a project or board outside the actor's memberships", async () => {
    await expect(projectScope(stranger.actor, projectId)).rejects.toThrow(NotFoundError);
    await expect(boardScope(stranger.actor, boardId)).rejects.toThrow(/No Board Found with ID/);
    await expect(projectScope(owner.actor, 999_999)).rejects.toThrow("No Projects Found with ID: 999999");
  });

  it("tells which posted ids belong to the scope", async () => {
    const b = await board();
    const ids = await gridIds(b);
    const outside = (await gridIds(await scope())).find((id) => !ids.includes(id))!;
    expect((await idsInScope(b, [ids[0]!, 999_999, outside])).sort()).toEqual([ids[0]]);
    // Past a 32-bit id (PostgreSQL refused the whole query) or not an id at all: simply not among them.
    expect(await idsInScope(b, [ids[0]!, 3_000_000_000, -1, 1.5])).toEqual([ids[0]]);
  });

  it("ignores malformed cursors", () => {
    const tooLarge = Buffer.from("1700000000000.3000000000").toString("base64url"); // an id past 32 bits
    for (const bad of ["", "x", "!!!", Buffer.from("1.2.3").toString("base64url"), "a".repeat(100), tooLarge])
      expect(decodeCursor(bad)).toBeNull();
  });
});
