import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { config, loadConfig, setConfig } from "~/config.server";
import { db } from "~/db/connection.server";
import { createBoard } from "~/models/boards.server";
import { addKeywordsBulk, countSelection } from "~/models/bulk.server";
import { decodeCursor, gridPage, gridTotal } from "~/models/grid.server";
import { updateImage } from "~/models/image-edits.server";
import { insertImage } from "~/models/images.server";
import { addMember } from "~/models/projects.server";
import { allProjectsScope, boardScope, projectScope, withFilter, type GridScope } from "~/models/scope.server";
import { resolveSharedUrl } from "~/models/share-access.server";
import { createShareLinks } from "~/models/share-links.server";
import { scopeVocabulary, vocabularySettings, type VocabularyTag } from "~/models/vocabulary.server";
import { smartAnswer, withSmartTags } from "~/services/smart-search.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

/** The scope as a page with `?smart=…` (and `?tags=…` once edited) sees it. */
const smart = <S extends GridScope>(scope: S, params: Record<string, string>) =>
  withSmartTags(withFilter(scope, new URLSearchParams(params)));

/** Every id the grid shows, in its order, walking the pages (and checking the count agrees). */
async function shown(scope: GridScope): Promise<number[]> {
  const ids: number[] = [];
  let after: string | null = null;
  do {
    const page = await gridPage(scope, { after: decodeCursor(after), limit: 2 });
    ids.push(...page.cards.map((c) => c.id));
    after = page.next;
  } while (after);
  expect(await gridTotal(scope)).toBe(ids.length);
  return ids;
}

describe.each(dialects)("smart search (%s)", (dialect) => {
  let t: TestDatabase;
  let project: () => ReturnType<typeof projectScope>;
  let owner: Awaited<ReturnType<typeof makeUser>>;
  const id: Record<string, number> = {};
  let boardId: string;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    owner = await makeUser();
    const stranger = await makeUser();
    const p = await makeProject([{ actor: owner.actor }]);
    project = () => projectScope(owner.actor, p.id);
    const add = async (name: string, n: number, m: ReturnType<typeof meta>, at: number) =>
      (id[name] = await insertImage(await project(), await storedFakeFile(n), m, { at }));
    const now = Date.now();
    // Newest first without a search; the smart search ranks by tags held instead.
    await add("both", 1, meta("Aisle view", ["Soda", "Grocery aisle", "Shopper"]), now - 50_000);
    await add("soda", 2, meta("Cans", ["Soda", "Shelf"]), now - 10_000);
    await add("aisle", 3, meta("Long aisle", ["Grocery aisle"]), now - 20_000);
    await add("chocolate", 4, meta("Sweets", ["Chocolate", "Checkout"]), now - 30_000);
    id.foreign = await insertImage(
      await projectScope(stranger.actor, (await makeProject([{ actor: stranger.actor }])).id),
      await storedFakeFile(5),
      meta("Forecourt", ["Soda", "Grocery aisle", "Forecourt"]),
    );
    boardId = (await createBoard(await project(), { title: "Mixed", imageIds: [id.soda!, id.chocolate!] })).id;
  });
  afterAll(() => t.drop());

  it("turns a phrase into the project's tags and ranks images by how many they hold", async () => {
    const scope = await smart(await project(), { smart: "fizzy soda in a grocery aisle" });
    expect(scope.filter?.tags).toEqual(expect.arrayContaining(["Soda", "Grocery aisle"]));
    const ids = await shown(scope);
    expect(ids[0]).toBe(id.both); // two tags, although the oldest
    expect(ids.slice(1).sort()).toEqual([id.soda, id.aisle].sort()); // one tag each
    expect(ids).not.toContain(id.chocolate);
    expect(ids).not.toContain(id.foreign);
  });

  it("matches tags whatever their case, and one noisy tag only adds images instead of emptying the result", async () => {
    const ids = await shown(await smart(await project(), { smart: "anything", tags: "SODA, unicorn, checkout" }));
    expect(ids.sort()).toEqual([id.both, id.soda, id.chocolate].sort());
  });

  it("finds nothing once every tag is removed, rather than everything", async () => {
    const scope = await smart(await project(), { smart: "soda", tags: "" });
    expect(scope.filter?.tags).toEqual([]);
    expect(await shown(scope)).toEqual([]);
    expect(await countSelection(scope, { all: true, ids: [] })).toBe(0);
  });

  it("proposes only tags of the scope's own vocabulary, never another project's", async () => {
    const answer = await smartAnswer(await project(), "forecourt with soda");
    expect(answer.tags).toContain("Soda");
    expect(answer.tags).not.toContain("Forecourt");
    expect(answer.description).toContain("Soda");
    expect(answer.failed).toBe(false);
  });

  it("reads a vocabulary in slices of images, each tag counted once per image however the slices fall", async () => {
    const counts = (vocabulary: VocabularyTag[]) => Object.fromEntries(vocabulary.map((v) => [v.tag, v.n]));
    const expected = { Soda: 2, "Grocery aisle": 2, Shopper: 1, Shelf: 1, Chocolate: 1, Checkout: 1 };
    const board = await boardScope(owner.actor, boardId);
    const defaults = { ...vocabularySettings };
    try {
      for (const slice of [1, 2, 3, 1000]) {
        vocabularySettings.slice = slice;
        // Each read at a version of its own: a write moves the project's and the board's versions on.
        await addKeywordsBulk(await project(), { all: false, ids: [id.chocolate!] }, [`Slice ${slice}`]);
        expect(counts(await scopeVocabulary(await project())), `slices of ${slice}`).toEqual({ ...expected, [`Slice ${slice}`]: 1 });
        expect(counts(await scopeVocabulary(await boardScope(owner.actor, board.board.id))), `board, slices of ${slice}`).toEqual({
          Soda: 1,
          Shelf: 1,
          Chocolate: 1,
          Checkout: 1,
          [`Slice ${slice}`]: 1,
        });
        const row = await db().selectFrom("images").selectAll().where("id", "=", id.chocolate!).executeTakeFirstOrThrow();
        const { title, description, ocr_text: ocrText } = row;
        await updateImage(await project(), row, { title, description, keywords: ["Chocolate", "Checkout"], ocrText });
      }
    } finally {
      Object.assign(vocabularySettings, defaults);
    }
  });

  it("inside a board finds only the board's images, with the board's vocabulary", async () => {
    const board = await boardScope(owner.actor, boardId);
    const scope = await smart(board, { smart: "soda in a grocery aisle" });
    expect(scope.filter?.tags).toEqual(["Soda"]); // "Grocery aisle" is not on the board
    expect(await shown(scope)).toEqual([id.soda]);
    expect(await shown(await smart(board, { smart: "x", tags: "grocery aisle,soda" }))).toEqual([id.soda]);
  });

  it("is not offered on a shared board: the link's grid ignores smart and tags", async () => {
    const board = await boardScope(owner.actor, boardId);
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "smart");
    const opened = await resolveSharedUrl(link!.path.slice("/shared-board/".length), "10.0.0.9", 60_000);
    if (opened.status !== "ok") throw new Error("expected a live link");
    const scope = withFilter(opened.scope, new URLSearchParams({ smart: "soda", tags: "soda" }));
    expect(scope.filter?.smart).toBeUndefined();
    expect(scope.filter?.tags).toBeUndefined();
    expect((await shown(scope)).sort()).toEqual([id.soda, id.chocolate].sort());
  });

  it("treats query syntax in tags as text", async () => {
    for (const tags of ['"soda', "soda*", "NEAR(soda", "soda OR shelf", "-soda", "soda)", "'; drop table images; --", "%_", "\u0000"]) {
      const scope = await smart(await project(), { smart: "x", tags });
      await expect(shown(scope), tags).resolves.toBeDefined();
    }
    expect(await shown(await smart(await project(), { smart: "x", tags: "soda*" }))).toEqual(expect.arrayContaining([id.soda]));
  });

  it("follows edits: a tag added to an image is proposed and found at once", async () => {
    const scope = await project();
    expect((await smartAnswer(scope, "vending machine")).tags).not.toContain("Vending machine");
    const row = await db().selectFrom("images").selectAll().where("id", "=", id.chocolate!).executeTakeFirstOrThrow();
    await updateImage(scope, row, { title: "Sweets", description: "", keywords: ["Chocolate", "Vending machine"], ocrText: "" });
    const after = await smart(await project(), { smart: "vending machine" });
    expect(after.filter?.tags).toEqual(["Vending machine"]);
    expect(await shown(after)).toEqual([id.chocolate]);
  });

  it("across projects proposes the tags of the projects the person belongs to now, not when the list was last read", async () => {
    const outsider = await makeUser();
    const own = await makeProject([{ actor: outsider.actor }]);
    await insertImage(await projectScope(outsider.actor, own.id), await storedFakeFile(9), meta("Own", ["Kombucha"]));
    const everywhere = async () => smartAnswer(await allProjectsScope(outsider.actor), "soda and kombucha");
    expect((await everywhere()).tags).toEqual(["Kombucha"]);
    const shared = (await project()).project.id;
    await addMember(shared, outsider.user.id, "viewer");
    expect((await everywhere()).tags).toEqual(["Soda", "Kombucha"]);
    await db().deleteFrom("project_members").where("project_id", "=", shared).where("user_id", "=", outsider.user.id).execute();
    // Nothing was written to either project: the versions are the same, the membership is not.
    expect((await everywhere()).tags).toEqual(["Kombucha"]);
  });

  it("keeps tags of at least two characters, at most 16", async () => {
    const scope = withFilter(
      await project(),
      new URLSearchParams({ smart: "x", tags: `a, b,${Array.from({ length: 20 }, (_, i) => `tag${i}`).join(",")}` }),
    );
    expect(scope.filter?.tags).toEqual(Array.from({ length: 16 }, (_, i) => `tag${i}`));
  });

  it("computes each tag's vector once and keeps it", async () => {
    await smartAnswer(await project(), "a worker refilling the coolers");
    const count = async () =>
      Number(
        (
          await db()
            .selectFrom("tag_vectors")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const stored = await count();
    expect(stored).toBeGreaterThanOrEqual(6); // every tag of the project
    await smartAnswer(await project(), "people buying sweets at the till");
    expect(await count()).toBe(stored);
  });

  describe("with an OpenAI-compatible service", () => {
    let server: Server;
    let reply: (body: unknown) => { status: number; body: unknown; delayMs?: number };
    const seen: { auth?: string; body: { model: string; messages: { content: string }[] } }[] = [];
    const original = () => config();
    let saved: ReturnType<typeof config>;

    beforeAll(async () => {
      server = createServer((req, res) => {
        let data = "";
        req.on("data", (c) => (data += c));
        req.on("end", () => {
          const body = JSON.parse(data);
          seen.push({ auth: req.headers.authorization, body });
          const r = reply(body);
          setTimeout(() => {
            res.writeHead(r.status, { "content-type": "application/json" });
            res.end(JSON.stringify(r.body));
          }, r.delayMs ?? 0);
        });
      });
      await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
      saved = original();
      const port = (server.address() as AddressInfo).port;
      setConfig(
        loadConfig({
          DATA_DIR: saved.dataDir,
          KOALA_ENV: "development",
          LOG_LEVEL: "error",
          SMART_SEARCH_PROVIDER: "openai",
          SMART_SEARCH_BASE_URL: `http://127.0.0.1:${port}/v1`,
          SMART_SEARCH_API_KEY: "sk-test-secret",
          SMART_SEARCH_MODEL: "tiny",
          SMART_SEARCH_TIMEOUT_SECONDS: "1",
        }),
      );
    });
    afterEach(() => (seen.length = 0));
    afterAll(async () => {
      setConfig(saved);
      await new Promise((done) => server.close(done));
    });
    const content = (answer: unknown) => ({ choices: [{ message: { content: JSON.stringify(answer) } }] });

    it("asks with the scope's tags as candidates and keeps only answers that are tags, in the scope's spelling", async () => {
      reply = () => ({ status: 200, body: content({ description: "Soft drinks on shelves", tags: ["SODA", "shelf", "unicorn"] }) });
      const answer = await smartAnswer(await project(), "remote phrase one");
      expect(answer).toMatchObject({ description: "Soft drinks on shelves", tags: ["Soda", "Shelf"], failed: false });
      expect(seen[0]!.auth).toBe("Bearer sk-test-secret");
      expect(seen[0]!.body.model).toBe("tiny");
      const asked = JSON.parse(seen[0]!.body.messages.at(-1)!.content);
      expect(asked.phrase).toBe("remote phrase one");
      expect(asked.candidates).toEqual(expect.arrayContaining(["Soda", "Grocery aisle", "Chocolate"]));
      expect(asked.candidates).not.toContain("Forecourt");
    });

    it("keeps no more tags than a URL carries, and asks again after a failure instead of keeping it", async () => {
      reply = () => ({ status: 500, body: { error: "down" } });
      expect((await smartAnswer(await project(), "flaky phrase")).failed).toBe(true);
      const many = Array.from({ length: 30 }, (_, i) => (i % 2 ? "Soda" : "Shelf"));
      reply = () => ({ status: 200, body: content({ description: "Back", tags: many }) });
      const again = await smartAnswer(await project(), "flaky phrase");
      expect(again).toMatchObject({ failed: false, description: "Back", tags: ["Shelf", "Soda"] });
      expect(seen).toHaveLength(2);
    });

    it("falls back to the local answer and says 'Failed to connect to server' on an error, nonsense or a time-out", async () => {
      for (const [i, r] of [
        { status: 500, body: { error: "down" } },
        { status: 200, body: { choices: [{ message: { content: "not json" } }] } },
        { status: 200, body: content({ description: "late", tags: ["Soda"] }), delayMs: 2_000 },
      ].entries()) {
        reply = () => r;
        const answer = await smartAnswer(await project(), `soda in a grocery aisle ${i}`);
        expect(answer.failed, `case ${i}`).toBe(true);
        expect(answer.tags).toEqual(expect.arrayContaining(["Soda", "Grocery aisle"]));
      }
    });
  });
});
