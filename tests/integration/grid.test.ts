import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError } from "~/models/actor";
import { createBoard } from "~/models/boards.server";
import type { Actor } from "~/models/actor";
import { cursorBefore, gridVersion, decodeCursor, gridPage, gridTotal, idsInScope, type GridScope } from "~/models/grid.server";
import { insertImage, insertImageRows } from "~/models/images.server";
import { deleteImage } from "~/models/image-edits.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { fakeFile, makeProject, makeUser, meta } from "../helpers/fixtures";

/** Every id of a scope, in grid order, by walking its pages. */
async function gridIds(actor: Actor, scope: GridScope): Promise<number[]> {
  const ids: number[] = [];
  let after: string | null = null;
  do {
    const page = await gridPage(actor, scope, { after: decodeCursor(after), limit: 300 });
    ids.push(...page.cards.map((c) => c.id));
    after = page.next;
  } while (after);
  return ids;
}

describe.each(dialects)("image grid paging (%s)", (dialect) => {
  let t: TestDatabase;
  let owner: Awaited<ReturnType<typeof makeUser>>;
  let stranger: Awaited<ReturnType<typeof makeUser>>;
  let scope: GridScope;
  let boardScope: GridScope;
  const T0 = 1_700_000_000_000;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    owner = await makeUser();
    stranger = await makeUser();
    const project = await makeProject([{ actor: owner.actor }]);
    await makeProject([{ actor: stranger.actor }]);
    // 250 images; several share a timestamp so the id tiebreak matters.
    await insertImageRows(
      owner.actor,
      project.id,
      Array.from({ length: 250 }, (_, i) => ({ file: fakeFile(i), meta: meta(`img ${i}`, ["a", "b", "c", "d", "e", "f"]), at: T0 + Math.floor(i / 3) * 1000 })),
    );
    scope = { kind: "project", projectId: project.id };
    const ids = await gridIds(owner.actor, scope);
    const board = await createBoard(owner.actor, { projectId: project.id, title: "B", imageIds: ids.slice(0, 40) });
    boardScope = { kind: "board", boardId: board.id };
  });
  afterAll(() => t.drop());

  async function walk(s: GridScope, limit: number, during?: (page: number) => Promise<void>) {
    const seen: number[] = [];
    let after: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const res = await gridPage(owner.actor, s, { after: decodeCursor(after), limit });
      seen.push(...res.cards.map((c) => c.id));
      await during?.(page);
      if (!res.next) break;
      after = res.next;
    }
    return seen;
  }

  it("returns every image exactly once, newest first, with the first five keywords", async () => {
    const seen = await walk(scope, 37);
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect(await gridTotal(owner.actor, scope)).toBe(250);
    const first = await gridPage(owner.actor, scope, { limit: 1 });
    expect(first.cards[0]).toMatchObject({ title: "img 249", keywords: ["a", "b", "c", "d", "e"] });
    expect(first.prev).toBeNull();
  });

  it("still returns every earlier image exactly once while new images arrive during paging", async () => {
    const before = new Set(await gridIds(owner.actor, scope));
    const projectId = (scope as { projectId: number }).projectId;
    let n = 1000;
    const seen = await walk(scope, 25, async () => {
      n += 1;
      await insertImage(owner.actor, projectId, fakeFile(n), meta(`new ${n}`), { at: Date.now() });
    });
    const seenBefore = seen.filter((id) => before.has(id));
    expect(seenBefore).toHaveLength(before.size);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("keeps the count right across writes in the same millisecond (counts are cached per version)", async () => {
    const projectId = (scope as { projectId: number }).projectId;
    const total = await gridTotal(owner.actor, scope);
    const at = Date.now();
    const v0 = await gridVersion(owner.actor, scope);
    const a = await insertImage(owner.actor, projectId, fakeFile(5001), meta("same ms 1"), { at });
    const v1 = await gridVersion(owner.actor, scope);
    expect(await gridTotal(owner.actor, scope)).toBe(total + 1);
    await insertImage(owner.actor, projectId, fakeFile(5002), meta("same ms 2"), { at });
    const v2 = await gridVersion(owner.actor, scope);
    expect(new Set([v0, v1, v2]).size).toBe(3);
    expect(await gridTotal(owner.actor, scope)).toBe(total + 2);
    await deleteImage(owner.actor, a);
    expect(await gridTotal(owner.actor, scope)).toBe(total + 1);
  });

  it("pages backwards to exactly the previous page", async () => {
    const p1 = await gridPage(owner.actor, scope, { limit: 20 });
    const p2 = await gridPage(owner.actor, scope, { after: decodeCursor(p1.next), limit: 20 });
    const back = await gridPage(owner.actor, scope, { before: decodeCursor(p2.prev), limit: 20 });
    expect(back.cards.map((c) => c.id)).toEqual(p1.cards.map((c) => c.id));
    expect(back.prev).toBeNull();
    expect(back.next).toBe(p1.next);
  });

  it("finds the cursor of any position for a jump, down to the last image", async () => {
    const all = await gridIds(owner.actor, scope);
    const total = await gridTotal(owner.actor, scope);
    const ordered = await walk(scope, 300);
    expect(ordered).toHaveLength(total);
    for (const index of [1, 57, total - 1]) {
      const page = await gridPage(owner.actor, scope, { after: await cursorBefore(owner.actor, scope, index), limit: 3 });
      expect(page.cards[0]!.id).toBe(ordered[index]);
    }
    expect(all).toHaveLength(total);
  });

  it("pages a board in the order images were added", async () => {
    const seen = await walk(boardScope, 7);
    expect(seen).toHaveLength(40);
    expect(await gridTotal(owner.actor, boardScope)).toBe(40);
  });

  it("answers not found for a project or board outside the actor's memberships", async () => {
    await expect(gridPage(stranger.actor, scope)).rejects.toThrow(NotFoundError);
    await expect(gridTotal(stranger.actor, boardScope)).rejects.toThrow(/No Board Found with ID/);
    await expect(gridPage(owner.actor, { kind: "project", projectId: 999_999 })).rejects.toThrow("No Projects Found with ID: 999999");
  });

  it("tells which posted ids belong to the scope", async () => {
    const ids = await gridIds(owner.actor, boardScope);
    expect((await idsInScope(owner.actor, boardScope, [ids[0]!, 999_999])).sort()).toEqual([ids[0]]);
    await expect(idsInScope(stranger.actor, boardScope, [ids[0]!])).rejects.toThrow(NotFoundError);
  });

  it("ignores malformed cursors", () => {
    for (const bad of ["", "x", "!!!", Buffer.from("1.2.3").toString("base64url"), "a".repeat(100)]) expect(decodeCursor(bad)).toBeNull();
  });
});
