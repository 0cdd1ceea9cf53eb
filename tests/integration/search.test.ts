import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { db, dialect as currentDialect } from "~/db/connection.server";
import { CompiledQuery, sql } from "kysely";
import { createBoard } from "~/models/boards.server";
import { addKeywordsBulk, countSelection } from "~/models/bulk.server";
import { cursorBefore, decodeCursor, gridPage, gridTotal, idsInScope, walkSettings } from "~/models/grid.server";
import { updateImage } from "~/models/image-edits.server";
import { insertImage } from "~/models/images.server";
import { boardScope, projectScope, withFilter, type GridScope } from "~/models/scope.server";
import { resolveSharedUrl } from "~/models/share-access.server";
import { createShareLinks } from "~/models/share-links.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

/** The scope narrowed by a keyword search, as a page with `?q=` sees it. */
const searched = <S extends GridScope>(scope: S, q: string): S => withFilter(scope, new URLSearchParams({ q }));

/** Every id the search finds, walking the pages. */
async function found(scope: GridScope, q: string): Promise<number[]> {
  const narrowed = searched(scope, q);
  const ids: number[] = [];
  let after: string | null = null;
  do {
    const page = await gridPage(narrowed, { after: decodeCursor(after), limit: 2 });
    ids.push(...page.cards.map((c) => c.id));
    after = page.next;
  } while (after);
  expect(await gridTotal(narrowed), `count of ${q}`).toBe(ids.length);
  return ids.sort((a, b) => a - b);
}

describe.each(dialects)("keyword search in the database (%s)", (dialect) => {
  let t: TestDatabase;
  let owner: Awaited<ReturnType<typeof makeUser>>;
  let project: () => ReturnType<typeof projectScope>;
  const id: Record<string, number> = {};
  let boardId: string;
  let foreignCola: number;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    owner = await makeUser();
    const stranger = await makeUser();
    const p = await makeProject([{ actor: owner.actor }]);
    project = () => projectScope(owner.actor, p.id);
    const add = async (name: string, n: number, m: ReturnType<typeof meta>) =>
      (id[name] = await insertImage(await project(), await storedFakeFile(n), m));
    await add("colaAisle", 1, meta("Cola can in the aisle", ["Soft drink", "Aisle"]));
    await add("creme", 2, meta("Crème brûlée pot", ["Dessert"]));
    await add("cocaCola", 3, meta("Coca-Cola shelf", ["Shelf"], "SALE 50% OFF"));
    await add("grocery", 4, meta("Grocery aisle", ["Aisle", "Fresh produce"]));
    await add("talker", 5, { ...meta("Shelf talker", ["Point of sale"]), originalName: "IMG_0042.jpg" });
    await add("descr", 6, { ...meta("Plain", []), description: "A vending machine outside a petrol station" });
    // Older than every other image, with its word in the title: relevance ranks it first all the same.
    id.petrolPump = await insertImage(await project(), await storedFakeFile(8), meta("Petrol pump", ["Forecourt"]), {
      at: Date.now() - 86_400_000,
    });
    foreignCola = await insertImage(
      await projectScope(stranger.actor, (await makeProject([{ actor: stranger.actor }])).id),
      await storedFakeFile(7),
      meta("Cola bottle", ["Cola", "Aisle"]),
    );
    boardId = (await createBoard(await project(), { title: "Drinks", imageIds: [id.colaAisle!, id.grocery!] })).id;
  });
  afterAll(() => t.drop());

  it("needs every word, in any of title, keywords, description, OCR text and file name", async () => {
    const scope = await project();
    expect(await found(scope, "cola aisle")).toEqual([id.colaAisle]);
    expect(await found(scope, "aisle")).toEqual([id.colaAisle, id.grocery].sort((a, b) => a! - b!));
    expect(await found(scope, "produce")).toEqual([id.grocery]); // keywords
    expect(await found(scope, "vending petrol")).toEqual([id.descr]); // description
    expect(await found(scope, "sale off")).toEqual([id.cocaCola]); // OCR text
    expect(await found(scope, "0042")).toEqual([id.talker]); // original file name
    expect(await found(scope, "cola nothing")).toEqual([]);
  });

  it("matches the last word as a prefix (not once a space follows it), and only the last", async () => {
    const scope = await project();
    expect(await found(scope, "groc")).toEqual([id.grocery]);
    expect(await found(scope, "groc ")).toEqual([]);
    expect(await found(scope, "groc aisle")).toEqual([]);
    expect(await found(scope, "aisle gro")).toEqual([id.grocery]);
  });

  it("folds case and accents on both sides", async () => {
    const scope = await project();
    expect(await found(scope, "CREME brulee")).toEqual([id.creme]);
    expect(await found(scope, "crème BRÛLÉE")).toEqual([id.creme]);
    expect(await found(scope, "Crême")).toEqual([id.creme]);
  });

  it("cuts and folds words alike on both dialects, whatever the script or the typography", async () => {
    const scope = await project();
    const add = async (n: number, title: string) => insertImage(await project(), await storedFakeFile(40 + n), meta(title, []));
    const moscow = await add(1, "Москва stall");
    const tokyo = await add(2, "東京 データ");
    const hindi = await add(3, "हिन्दी poster");
    const ecole = await add(4, "E\u0301cole sign"); // decomposed, as macOS writes file names
    const dont = await add(5, "Don’t walk—sign");
    const korean = await add(6, "한국 매장");
    for (const [q, want] of [
      ["москва", [moscow]],
      ["МОСКВА", [moscow]],
      ["データ", [tokyo]],
      ["東京", [tokyo]],
      ["हिन्दी", [hindi]],
      ["école", [ecole]],
      ["ecole", [ecole]],
      ["don't", [dont]],
      ["don’t walk", [dont]],
      ["walk-sign", [dont]],
      ["한국", [korean]],
    ] as const)
      expect(await found(scope, q), q).toEqual(want);
  });

  it("matches quoted words, and words joined by punctuation, as a phrase", async () => {
    const scope = await project();
    expect(await found(scope, '"coca cola"')).toEqual([id.cocaCola]);
    expect(await found(scope, "coca-cola")).toEqual([id.cocaCola]);
    expect(await found(scope, '"cola coca"')).toEqual([]);
    expect(await found(scope, '"point of sale"')).toEqual([id.talker]);
    expect(await found(scope, '"point sale"')).toEqual([]);
  });

  it("ranks matches in the title or keywords first, then the newest, across pages and back", async () => {
    const scope = searched(await project(), "petrol");
    const first = await gridPage(scope, { limit: 1 });
    expect(first.cards.map((c) => c.id)).toEqual([id.petrolPump]);
    const second = await gridPage(scope, { after: decodeCursor(first.next), limit: 1 });
    expect(second.cards.map((c) => c.id)).toEqual([id.descr]);
    expect(second.next).toBeNull();
    expect((await gridPage(scope, { before: decodeCursor(second.prev), limit: 1 })).cards.map((c) => c.id)).toEqual([id.petrolPump]);
    expect(await cursorBefore(scope, 1)).toEqual(decodeCursor(first.next));
    // Without a search the grid is newest first: the pump comes last.
    expect((await gridPage(await project(), { limit: 100 })).cards.at(-1)!.id).toBe(id.petrolPump);
  });

  it("walks a common word along the project's index, also in windows of the newest images, with the same pages, in the same order, as the join", async () => {
    const scope = await project();
    const pages = async (q: string, limit: number) => {
      const narrowed = searched(scope, q);
      const seen: number[][] = [];
      let after: string | null = null;
      do {
        const page = await gridPage(narrowed, { after: decodeCursor(after), limit });
        seen.push(page.cards.map((c) => c.id));
        after = page.next;
      } while (after);
      // And back from the last page, as the virtual grid scrolls up.
      const lastCursor = decodeCursor((await gridPage(narrowed, { limit: 100 })).next);
      return { seen, lastCursor };
    };
    // Words whose matches are in the title or keywords, elsewhere only, or both (the two tiers), and a prefix.
    // Phrases and several words with a prefix last: the windows spell out only the last word, keep the rest.
    for (const q of ["aisle", "petrol", "cola", "a", "shelf", "sale", "coca", "coca-col", "petrol pu", "cola coc", "gro aisl"])
      for (const limit of [1, 2, 3]) {
        const defaults = { ...walkSettings };
        Object.assign(walkSettings, { from: Number.MAX_SAFE_INTEGER }); // never walk: the join
        const joined = await pages(q, limit);
        try {
          Object.assign(walkSettings, { from: 1, windowFrom: Number.MAX_SAFE_INTEGER }); // always walk, never in windows
          expect(await pages(q, limit), `${q}, pages of ${limit}`).toEqual(joined);
          // Windows of 1, 2 and 4 images: pages that end inside a window, at its edge, and past it.
          for (const window of [1, 2, 4]) {
            Object.assign(walkSettings, { from: 1, windowFrom: 1, window });
            expect(await pages(q, limit), `${q}, pages of ${limit}, windows of ${window}`).toEqual(joined);
          }
        } finally {
          Object.assign(walkSettings, defaults);
        }
      }
  });

  it("walks a very common word in windows of the newest images, ids out of creation order, with the join's pages", async () => {
    // A project of its own: ten images of one word, created in an order that is not their ids' order, so a window's
    // id range holds older images than its edge (which the walk must leave for later windows).
    const own = await makeProject([{ actor: owner.actor }]);
    const scope = await projectScope(owner.actor, own.id);
    const day = 86_400_000;
    // Two words share the prefix "kiosk": a prefix the windows spell out as the words the index holds. Some titles
    // also say "stand": "stand kios" spells out its last word only.
    for (const [i, d] of [5, 1, 8, 3, 9, 0, 6, 2, 7, 4].entries())
      await insertImage(scope, await storedFakeFile(100 + i), meta(`${i % 3 ? "" : "Stand "}Kiosk ${i}`, [i % 2 ? "Kiosks" : "Kiosk"]), {
        at: Date.now() - 20 * day + d * day,
      });
    const pages = async (q = "kiosk") => {
      const narrowed = searched(await projectScope(owner.actor, own.id), q);
      const seen: number[][] = [];
      let after: string | null = null;
      do {
        const page = await gridPage(narrowed, { after: decodeCursor(after), limit: 3 });
        seen.push(page.cards.map((c) => c.id));
        after = page.next;
      } while (after);
      return seen;
    };
    const defaults = { ...walkSettings };
    const executor = db().getExecutor();
    const sent = vi.spyOn(executor, "executeQuery");
    try {
      Object.assign(walkSettings, { from: Number.MAX_SAFE_INTEGER });
      const joined = await pages();
      expect(joined.flat()).toHaveLength(10);
      const windowed = async (label: string) => {
        for (const window of [1, 2, 3]) {
          Object.assign(walkSettings, { from: 1, windowFrom: 1, window });
          sent.mockClear();
          expect(await pages(), `${label}, windows of ${window}`).toEqual(joined);
          // The windows were walked: the match was narrowed to a range of ids (and on SQLite the prefix spelled out).
          expect(sent.mock.calls.some(([q]) => / between /.test(q.sql))).toBe(true);
          if (dialect === "sqlite")
            expect(sent.mock.calls.some(([q]) => q.parameters.some((p) => /"kiosks"\) OR|OR \("kiosks"/.test(String(p))))).toBe(true);
        }
      };
      await windowed("two words");
      Object.assign(walkSettings, { from: Number.MAX_SAFE_INTEGER });
      const stands = await pages("stand kios");
      expect(stands.flat()).toHaveLength(4);
      for (const window of [1, 2, 3]) {
        Object.assign(walkSettings, { from: 1, windowFrom: 1, window });
        expect(await pages("stand kios"), `stand kios, windows of ${window}`).toEqual(stands);
      }
      // A third word in the project, written after the words were read: the next search finds it.
      const newest = await insertImage(scope, await storedFakeFile(120), meta("Kioskette", ["Kioskette"]));
      Object.assign(walkSettings, { from: Number.MAX_SAFE_INTEGER });
      const again = await pages();
      expect(again[0]).toContain(newest);
      joined.splice(0, joined.length, ...again);
      await windowed("a third word");
    } finally {
      sent.mockRestore();
      Object.assign(walkSettings, defaults);
    }
  });

  it("reads a search's matches first and finds their images by id, never walking the project's own index", async () => {
    const executor = db().getExecutor();
    const sent = vi.spyOn(executor, "executeQuery");
    try {
      const scope = await project();
      // A rare word (joined, not walked), and a smart search's tags.
      const searches = [searched(scope, "petrol"), withFilter(scope, new URLSearchParams({ smart: "drinks", tags: "aisle,dessert" }))];
      for (const narrowed of searches) {
        sent.mockClear();
        expect((await gridPage(narrowed, { limit: 2 })).cards.length).toBeGreaterThan(0);
        const page = sent.mock.calls.map(([q]) => q).find((q) => /order by/.test(q.sql));
        expect(page?.sql, "the page's statement goes from the matches to their images").toMatch(/ as "[ms]" cross join "images" /);
        if (dialect !== "sqlite") continue; // PostgreSQL plans the join by its statistics
        const explained = await db().executeQuery<{ detail: string }>(
          CompiledQuery.raw(`explain query plan ${page!.sql}`, [...page!.parameters]),
        );
        const plan = explained.rows.map((r) => r.detail);
        expect(plan.join(" | ")).toMatch(/SCAN [ms]\b.*SEARCH images USING INTEGER PRIMARY KEY/);
        expect(plan.join(" | ")).not.toMatch(/images_project/);
      }
    } finally {
      sent.mockRestore();
    }
  });

  it("sorts only a joined page's keys and reads its cards' columns for the page's rows alone", async () => {
    const executor = db().getExecutor();
    const sent = vi.spyOn(executor, "executeQuery");
    try {
      const scope = await project();
      sent.mockClear();
      const page = await gridPage(withFilter(scope, new URLSearchParams({ smart: "drinks", tags: "aisle,dessert" })), { limit: 2 });
      expect(page.cards.length).toBeGreaterThan(0);
      expect(page.cards[0]!.title, "the cards still carry their columns").toBeTruthy();
      const statement = sent.mock.calls.map(([q]) => q.sql).find((s) => /order by/.test(s))!;
      // select <the cards' columns> from (<the sorted keys>) as "k" cross join "images" where images.id = k.id …
      const keys = statement.slice(statement.indexOf(" from (") + 7, statement.lastIndexOf(') as "k" cross join "images" '));
      expect(keys, "the page's rows are joined to their images after the sort").toMatch(/^select "images"\."id" as "id", .* as "t" from /);
      expect(keys, "the sort carries no card column").not.toMatch(/"title"|"keywords"|"thumb_key"/);
      expect(keys).toMatch(/order by .* limit (\?|\$\d+)$/);
      expect(statement).toMatch(/^select "images"\."id", "images"\."title", .* where "images"\."id" = "k"\."id" order by/);
    } finally {
      sent.mockRestore();
    }
  });

  it("treats query syntax as words: never an error, never an operator", async () => {
    const scope = await project();
    // Operators of FTS5 and tsquery are words here, so these need a word no image has.
    for (const q of [
      "cola OR aisle",
      "NEAR(cola aisle)",
      "cola AND nothing",
      "cola NOT aisle",
      "cola & nothing",
      "{title}: cola",
      "title:cola",
    ])
      expect(await found(scope, q), q).toEqual([]);
    expect(await found(scope, "cola | aisle")).toEqual([id.colaAisle]); // | is punctuation: two words
    // Punctuation around words is a separator: the words still match.
    for (const q of ["-cola", "cola*", "(cola", "cola)", "^cola", "'cola'", "cola\\", '"cola'])
      expect(await found(scope, q), q).toEqual([id.colaAisle, id.cocaCola].sort((a, b) => a! - b!));
    // Nothing but syntax: no words, no filter.
    for (const q of ['"', "*", "()", "-", "'", "%", "_", ":", "\\", "' OR 1=1 --"])
      expect((await found(scope, q)).length, q).toBeGreaterThanOrEqual(q === "' OR 1=1 --" ? 0 : 6);
    for (const q of [
      "\u0939\u093f",
      "\u093f",
      "\u093f\u093f cola",
      "\u0000cola",
      "cola\u0000",
      "🥤 cola",
      "x".repeat(5000),
      `${"cola ".repeat(100)}`,
      "\u202Ecola",
    ])
      await expect(found(scope, q), JSON.stringify(q.slice(0, 20))).resolves.toBeInstanceOf(Array);
  });

  it("keeps a board's search, and a shared board's, inside the board; a project's inside the project", async () => {
    const board = await boardScope(owner.actor, boardId);
    expect(await found(board, "aisle")).toEqual([id.colaAisle, id.grocery].sort((a, b) => a! - b!));
    expect(await found(board, "coca")).toEqual([]); // in the project, not on the board
    expect(await found(await project(), "bottle")).toEqual([]); // the other project's image
    expect(await found(await project(), "cola")).not.toContain(foreignCola);
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "search");
    const opened = await resolveSharedUrl(link!.path.slice("/shared-board/".length), "10.0.0.9", 60_000);
    if (opened.status !== "ok") throw new Error("expected a live link");
    expect(await found(opened.scope, "cola")).toEqual([id.colaAisle]);
    expect(await found(opened.scope, "shelf")).toEqual([]);
    // A link without downloads never shows file names, so its search does not look at them.
    const talker = await boardScope(owner.actor, (await createBoard(await project(), { title: "Talker", imageIds: [id.talker!] })).id);
    const open = async (allowDownload: boolean) => {
      const [made] = await createShareLinks(talker, [null], { expiry: "30", allowDownload, showMetadata: true }, "files");
      const resolved = await resolveSharedUrl(made!.path.slice("/shared-board/".length), "10.0.0.9", 60_000);
      if (resolved.status !== "ok") throw new Error("expected a live link");
      return resolved.scope;
    };
    expect(await found(await open(true), "0042")).toEqual([id.talker]);
    expect(await found(await open(false), "0042")).toEqual([]);
    expect(await found(await open(false), "talker")).toEqual([id.talker]);
  });

  it("applies select all and a bulk action to the searched set only", async () => {
    const scope = searched(await project(), "aisle");
    expect(await countSelection(scope, { all: true, ids: [] })).toBe(2);
    expect(await idsInScope(scope, [id.colaAisle!, id.creme!, foreignCola])).toEqual([id.colaAisle]);
    expect(await addKeywordsBulk(scope, { all: true, ids: [] }, ["Checked"])).toEqual({ affected: 2, skipped: 0 });
    expect(await found(await project(), "checked")).toEqual([id.colaAisle, id.grocery].sort((a, b) => a! - b!));
  });

  it("follows every change: an edited title is found by its new words, no longer by the old", async () => {
    const scope = await project();
    const row = await db().selectFrom("images").selectAll().where("id", "=", id.descr!).executeTakeFirstOrThrow();
    await updateImage(scope, row, { title: "Kiosk front", description: "", keywords: ["Kiosk"], ocrText: "" });
    expect(await found(await project(), "vending")).toEqual([]);
    expect(await found(await project(), "kiosk front")).toEqual([id.descr]);
    // A row removed for good (the purge job does this) leaves the index too.
    await db().deleteFrom("images").where("id", "=", id.descr!).execute();
    expect(await found(await project(), "kiosk")).toEqual([]);
    if (currentDialect() === "sqlite") await sql`insert into images_fts(images_fts) values ('integrity-check')`.execute(db());
    else
      expect(
        (await sql<{ n: number }>`select count(*)::int as n from image_search where image_id = ${id.descr!}`.execute(db())).rows[0]!.n,
      ).toBe(0);
  });
});
