import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { sha256 } from "~/lib/crypto.server";
import { NotAllowedError, NotFoundError } from "~/lib/errors";
import { SHARE_MESSAGES, ShareByEmailSchema } from "~/lib/schemas";
import { createBoard, pinImage, removeFromBoard } from "~/models/boards.server";
import { gridTotal } from "~/models/grid.server";
import { insertImage } from "~/models/images.server";
import { boardScope, projectScope, type BoardScope, type SharedBoardScope } from "~/models/scope.server";
import { findSharedObject, GUESSES_PER_WINDOW, resolveSharedUrl, sharedImage } from "~/models/share-access.server";
import { pendingDigests } from "~/models/share-digests.server";
import { createShareLinks, extendShareLink, listShareLinks, revokeShareLink } from "~/models/share-links.server";
import { imageReviews, REVIEWS_PER_HOUR, reviewCounts, reviewImage } from "~/models/share-reviews.server";
import { sendReviewDigests } from "~/services/sharing.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

const OPTIONS = { expiry: "30", allowDownload: true, showMetadata: true } as const;
const WINDOW = 15 * 60_000;
const urlOf = (path: string) => path.slice("/shared-board/".length);

async function open(path: string, ip = "10.0.0.1"): Promise<SharedBoardScope> {
  const found = await resolveSharedUrl(urlOf(path), ip, WINDOW);
  if (found.status !== "ok") throw new Error(`expected a live link, got ${found.status}`);
  return found.scope;
}

describe.each(dialects)("share links and the review loop (%s)", (dialect) => {
  let t: TestDatabase;
  let editor: Awaited<ReturnType<typeof makeUser>>;
  let viewer: Awaited<ReturnType<typeof makeUser>>;
  let board: BoardScope;
  let otherBoard: BoardScope;
  let foreignBoard: BoardScope;
  const onBoard: number[] = [];
  let offBoard: number;
  let onOtherBoard: number;
  let foreignImage: number;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    editor = await makeUser();
    viewer = await makeUser();
    const stranger = await makeUser();
    const project = await makeProject([{ actor: editor.actor }, { actor: viewer.actor, role: "viewer" }]);
    const foreign = await makeProject([{ actor: stranger.actor }]);
    const scope = await projectScope(editor.actor, project.id);
    for (let i = 0; i < 3; i++) onBoard.push(await insertImage(scope, await storedFakeFile(300 + i), meta(`on board ${i}`, ["shelf"])));
    offBoard = await insertImage(scope, await storedFakeFile(310), meta("in the project only"));
    onOtherBoard = await insertImage(scope, await storedFakeFile(311), meta("on another board"));
    foreignImage = await insertImage(await projectScope(stranger.actor, foreign.id), await storedFakeFile(312), meta("foreign"));
    board = await boardScope(editor.actor, (await createBoard(scope, { title: "For the client", imageIds: onBoard })).id);
    otherBoard = await boardScope(editor.actor, (await createBoard(scope, { title: "Internal", imageIds: [onOtherBoard] })).id);
    foreignBoard = await boardScope(
      stranger.actor,
      (await createBoard(await projectScope(stranger.actor, foreign.id), { title: "Theirs", imageIds: [foreignImage] })).id,
    );
  });
  afterAll(() => t.drop());

  it("stores only the token's SHA-256: the path carries 256 random bits, the database never the token", async () => {
    const [link] = await createShareLinks(board, ["client@example.com"], OPTIONS);
    const token = link!.path.split(":")[1]!;
    expect(link!.path).toBe(`/shared-board/${board.board.id}:${token}`);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43,}$/); // 32 bytes, base64url
    const row = await db().selectFrom("share_links").selectAll().where("id", "=", link!.id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256(token));
    expect(JSON.stringify(row)).not.toContain(token);
    const again = await createShareLinks(board, ["client@example.com"], OPTIONS);
    expect(again[0]!.path).not.toBe(link!.path);
  });

  it("makes one link per recipient, and lists them with their counts for the team", async () => {
    const links = await createShareLinks(board, ["a@example.com", "b@example.com"], OPTIONS);
    const [pasted] = await createShareLinks(board, [null], OPTIONS, "Q3 report");
    const listed = await listShareLinks(board);
    expect(listed.map((l) => l.recipient ?? l.label)).toEqual(expect.arrayContaining(["a@example.com", "b@example.com", "Q3 report"]));
    const a = listed.find((l) => l.id === links[0]!.id)!;
    expect(a).toMatchObject({ views: 0, downloads: 0, reviews: 0, revokedAt: null });
    expect(a.expiresAt! - a.createdAt).toBe(30 * 86_400_000);
    expect(listed.find((l) => l.id === pasted!.id)!.recipient).toBeNull();
  });

  it("opens a live link as a read-only scope of its board, with the link's options", async () => {
    const [link] = await createShareLinks(board, ["c@example.com"], { expiry: "never", allowDownload: false, showMetadata: false });
    const scope = await open(link!.path);
    expect(scope).toMatchObject({ kind: "shared", board: { id: board.board.id }, link: { allowDownload: false, showMetadata: false } });
    expect(scope.can).toEqual({ edit: false, manage: false, download: false, select: false });
    expect(await gridTotal(scope)).toBe(3);
  });

  it("answers 'invalid' alike for a missing, malformed or unknown URL, and for a valid token under another board's id", async () => {
    const [link] = await createShareLinks(board, [null], OPTIONS, "idor");
    const token = link!.path.split(":")[1]!;
    for (const raw of [
      undefined,
      "",
      board.board.id,
      `${board.board.id}:`,
      `:${token}`,
      `${board.board.id}:${token.slice(0, -1)}x`,
      `${board.board.id}:${"A".repeat(43)}`,
      `${otherBoard.board.id}:${token}`,
      `${foreignBoard.board.id}:${token}`,
      `${board.board.id}:${token}<script>`,
    ])
      expect(await resolveSharedUrl(raw, `192.0.2.${Math.floor(Math.random() * 200)}`, WINDOW)).toEqual({ status: "invalid" });
  });

  it("stops a revoked or expired link at once, saying who to ask; extending brings an expired one back", async () => {
    const [revoked, expired] = await createShareLinks(board, ["r@example.com", "e@example.com"], OPTIONS);
    await open(revoked!.path);
    await revokeShareLink(board, revoked!.id);
    expect(await resolveSharedUrl(urlOf(revoked!.path), "10.0.0.2", WINDOW)).toMatchObject({
      status: "gone",
      reason: "revoked",
      contact: { email: editor.user.email },
    });
    await db()
      .updateTable("share_links")
      .set({ expires_at: Date.now() - 1 })
      .where("id", "=", expired!.id)
      .execute();
    expect(await resolveSharedUrl(urlOf(expired!.path), "10.0.0.2", WINDOW)).toMatchObject({ status: "gone", reason: "expired" });
    await extendShareLink(board, expired!.id, "7");
    expect((await open(expired!.path)).link.id).toBe(expired!.id);
  });

  it("lets only the board's editors create, revoke or extend links: a viewer is refused (403), another board's editor gets not found", async () => {
    const [link] = await createShareLinks(board, [null], OPTIONS, "guarded");
    const asViewer = await boardScope(viewer.actor, board.board.id);
    await expect(createShareLinks(asViewer, [null], OPTIONS, "x")).rejects.toBeInstanceOf(NotAllowedError);
    await expect(revokeShareLink(asViewer, link!.id)).rejects.toBeInstanceOf(NotAllowedError);
    await expect(revokeShareLink(foreignBoard, link!.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(extendShareLink(otherBoard, link!.id, "90")).rejects.toBeInstanceOf(NotFoundError);
    expect((await open(link!.path)).link.id).toBe(link!.id);
  });

  it("rate-limits guessing per client address, not the visitors of real links from elsewhere", async () => {
    const ip = "203.0.113.9";
    for (let i = 0; i < GUESSES_PER_WINDOW; i++)
      expect(await resolveSharedUrl(`${board.board.id}:${"B".repeat(40)}${i}`, ip, WINDOW)).toEqual({ status: "invalid" });
    await expect(resolveSharedUrl(`${board.board.id}:${"C".repeat(43)}`, ip, WINDOW)).rejects.toMatchObject({ status: 429 });
    const [link] = await createShareLinks(board, [null], OPTIONS, "elsewhere");
    expect((await resolveSharedUrl(urlOf(link!.path), "203.0.113.10", WINDOW)).status).toBe("ok");
  });

  it("serves media only for images on the link's board now, originals only when downloads are allowed", async () => {
    const [withDownloads] = await createShareLinks(board, [null], OPTIONS, "media");
    const [viewOnly] = await createShareLinks(board, [null], { ...OPTIONS, allowDownload: false }, "media, view only");
    const scope = await open(withDownloads!.path);
    const noDownload = await open(viewOnly!.path);
    const row = async (id: number) =>
      db().selectFrom("images").select(["storage_key", "thumb_key", "preview_key"]).where("id", "=", id).executeTakeFirstOrThrow();
    const mine = await row(onBoard[0]!);
    expect(await findSharedObject(scope, onBoard[0]!, mine.thumb_key)).not.toBeNull();
    expect(await findSharedObject(scope, onBoard[0]!, mine.preview_key)).not.toBeNull();
    expect(await findSharedObject(scope, onBoard[0]!, mine.storage_key)).not.toBeNull();
    expect(await findSharedObject(noDownload, onBoard[0]!, mine.thumb_key)).not.toBeNull();
    expect(await findSharedObject(noDownload, onBoard[0]!, mine.storage_key)).toBeNull();
    // Another image's key under this image's id, and images that are not on the board.
    expect(await findSharedObject(scope, onBoard[0]!, (await row(offBoard)).thumb_key)).toBeNull();
    for (const id of [offBoard, onOtherBoard, foreignImage])
      expect(await findSharedObject(scope, id, (await row(id)).thumb_key)).toBeNull();
    await expect(sharedImage(scope, foreignImage)).rejects.toBeInstanceOf(NotFoundError);
    // Removed from the board: cut off at once, thumbnails included; pinned back, served again.
    await removeFromBoard(board, onBoard[0]!);
    expect(await findSharedObject(scope, onBoard[0]!, mine.thumb_key)).toBeNull();
    await pinImage(await projectScope(editor.actor, board.project.id), onBoard[0]!, board.board.id);
    expect(await findSharedObject(scope, onBoard[0]!, mine.thumb_key)).not.toBeNull();
  });

  it("records reviews per visitor (a new one replaces theirs), shows them to the team, counts them and filters the grid", async () => {
    const [link] = await createShareLinks(board, ["reviewer@example.com"], OPTIONS);
    const scope = await open(link!.path);
    const ann = { key: "visitor-ann", name: "Ann" };
    const bob = { key: "visitor-bob", name: "Bob" };
    const before = (await boardScope(editor.actor, board.board.id)).board.version;
    await reviewImage(scope, ann, onBoard[0]!, { mark: "approved" });
    await reviewImage(scope, ann, onBoard[0]!, { comment: "  <b>Love</b> this one  " });
    await reviewImage(scope, bob, onBoard[1]!, { mark: "rejected" });
    await expect(reviewImage(scope, ann, offBoard, { mark: "approved" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(reviewImage(scope, ann, foreignImage, { mark: "approved" })).rejects.toBeInstanceOf(NotFoundError);
    const team = await boardScope(editor.actor, board.board.id);
    expect(team.board.version).toBeGreaterThan(before);
    const reviews = await imageReviews(team, onBoard[0]!);
    expect(reviews).toEqual([
      expect.objectContaining({ visitorName: "Ann", via: "reviewer@example.com", mark: "approved", comment: "<b>Love</b> this one" }),
    ]);
    expect(await imageReviews(otherBoard, onBoard[0]!)).toEqual([]);
    expect((await reviewCounts([board.board.id])).get(board.board.id)).toMatchObject({ approved: 1, rejected: 1, comments: 1 });
    expect(await gridTotal({ ...team, filter: { review: "approved" } })).toBe(1);
    expect(await gridTotal({ ...team, filter: { review: "rejected" } })).toBe(1);
    expect(await gridTotal({ ...team, filter: { review: "commented" } })).toBe(1);
    expect(await gridTotal(team)).toBe(3);
  });

  it("limits reviews per link and client address too, however many visitor keys a client makes up", { timeout: 60_000 }, async () => {
    const [link] = await createShareLinks(board, [null], OPTIONS, "flood");
    const scope = await open(link!.path);
    const ip = "198.51.100.7";
    for (let i = 0; i < REVIEWS_PER_HOUR * 3; i++)
      await reviewImage(scope, { key: `made-up-${i}`, name: "Bot" }, onBoard[0]!, { mark: "approved" }, ip);
    await expect(reviewImage(scope, { key: "made-up-new", name: "Bot" }, onBoard[0]!, { mark: "approved" }, ip)).rejects.toMatchObject({
      status: 429,
    });
    // Another address on the same link is not held back.
    await reviewImage(scope, { key: "someone-else", name: "Eve" }, onBoard[0]!, { mark: "approved" }, "198.51.100.8");
  });

  it("gathers a day's review activity into one digest per board for its owner, then only what is new", async () => {
    const [link] = await createShareLinks(board, [null], OPTIONS, "digest");
    const scope = await open(link!.path);
    await reviewImage(scope, { key: "visitor-cy", name: "Cy" }, onBoard[2]!, { mark: "rejected", comment: "Too dark" });
    const first = await pendingDigests(Date.now());
    const mine = first.filter((d) => d.boardId === board.board.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.ownerEmail).toBe(editor.user.email);
    expect(mine[0]!.reviews).toEqual(
      expect.arrayContaining([expect.objectContaining({ visitor: "Cy", mark: "rejected", comment: "Too dark", image: "on board 2" })]),
    );
    await sendReviewDigests(Date.now());
    expect((await pendingDigests(Date.now())).filter((d) => d.boardId === board.board.id)).toEqual([]);
    await new Promise((r) => setTimeout(r, 5));
    await reviewImage(scope, { key: "visitor-cy", name: "Cy" }, onBoard[1]!, { mark: "approved" });
    const next = (await pendingDigests(Date.now())).filter((d) => d.boardId === board.board.id);
    expect(next.map((d) => d.reviews.map((r) => r.image))).toEqual([["on board 1"]]);
  });
});

describe("sharing by e-mail: the address list (spec messages)", () => {
  const parse = (emails: string) => ShareByEmailSchema.safeParse({ intent: "email", emails });
  const message = (emails: string) => {
    const r = parse(emails);
    return r.success ? null : r.error.issues[0]!.message;
  };

  it("says 'You need to write something!' for nothing but blanks and commas", () => {
    for (const v of ["", "   ", " , ,"]) expect(message(v)).toBe(SHARE_MESSAGES.empty);
  });

  it("names the invalid address, with the spec's message", () => {
    expect(message("good@example.com, not-an-address")).toBe(`${SHARE_MESSAGES.invalid} “not-an-address” is not one.`);
    expect(message("x0,victim@b.test<script>")).toContain(SHARE_MESSAGES.invalid);
    expect(message("a@b")).toContain(SHARE_MESSAGES.invalid);
  });

  it("takes one address or a comma-separated list, trimmed, lower-cased and without repeats", () => {
    const r = parse(" Ann@Example.com, bob@example.com ,ann@example.com ");
    expect(r.success && r.data.emails).toEqual(["ann@example.com", "bob@example.com"]);
    expect(r.success && r.data.expiry).toBe("30");
  });
});
