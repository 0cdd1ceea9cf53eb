import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, dialect as currentDialect } from "~/db/connection.server";
import { sql } from "kysely";
import { createBoard } from "~/models/boards.server";
import { addKeywordsBulk, countSelection } from "~/models/bulk.server";
import { cursorBefore, decodeCursor, gridPage, gridTotal, idsInScope, sortedPage, walkSettings, walkStatement } from "~/models/grid.server";
import { updateImage } from "~/models/image-edits.server";
import { insertImage, insertImageRows } from "~/models/images.server";
import { boardScope, projectScope, withFilter, type GridScope } from "~/models/scope.server";
import { pagePlan, searchPlan } from "~/models/search-plan.server";
import { prefixWords } from "~/models/search.server";
import { resolveSharedUrl } from "~/models/share-access.server";
import { createShareLinks } from "~/models/share-links.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { pgNodes, postgresPlan, sqlitePlan, under, type PgPlanNode } from "../helpers/plans";
import { fakeFile, makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

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

  it("pages a search whose images tie on rank and time by the composite cursor (rank, time, id): every image exactly once, in order, joined or walked, forward and back", async () => {
    // A project of its own: 30 images at three times (ten to a time), every one of them matching "booth" (in the
    // description), half of them in the title too (rank 1); a smart search's tags "booth" and "fair" held 0, 1 or 2
    // times. So whole pages tie on rank and time and only the id tells the images apart.
    const own = await makeProject([{ actor: owner.actor }]);
    const scope = await projectScope(owner.actor, own.id);
    const at = Date.now() - 10 * 86_400_000;
    const made = Array.from({ length: 30 }, (_, i) => ({
      i,
      title: `${i % 2 ? "Stand" : "Booth"} ${i}`,
      keywords: i % 4 < 2 ? ["Fair"] : [],
      at: at + (i % 3) * 1000,
    }));
    await insertImageRows(
      scope,
      made.map((m) => ({
        file: fakeFile(300 + m.i),
        meta: { ...meta(m.title, m.keywords), description: "A booth at the trade show" },
        at: m.at,
      })),
    );
    const rows = await db().selectFrom("images").select(["id", "title"]).where("project_id", "=", own.id).execute();
    const idOf = new Map(rows.map((r) => [r.title, r.id]));
    const images = made.map((m) => ({
      ...m,
      id: idOf.get(m.title)!,
      strong: m.i % 2 ? 0 : 1,
      tags: (m.i % 2 ? 0 : 1) + (m.i % 4 < 2 ? 1 : 0),
    }));
    /** The order worked out here: rank, then time, then id, each highest first. */
    const ordered = (rank: (m: (typeof images)[number]) => number, keep = (_: (typeof images)[number]) => true) =>
      images
        .filter(keep)
        .sort((a, b) => rank(b) - rank(a) || b.at - a.at || b.id - a.id)
        .map((m) => m.id);
    const cases = [
      { params: { q: "booth" }, rank: "strong", want: ordered((m) => m.strong) },
      {
        params: { smart: "x", tags: "booth,fair" },
        rank: "tags",
        want: ordered(
          (m) => m.tags,
          (m) => m.tags > 0,
        ),
      },
      {
        params: { q: "booth", smart: "x", tags: "booth,fair" },
        rank: "tags+strong",
        want: ordered(
          (m) => 2 * m.tags + m.strong,
          (m) => m.tags > 0,
        ),
      },
    ] as const;
    // The data ties: rank and time repeat within every page of a few cards.
    expect(new Set(images.map((m) => `${m.strong}|${m.at}`)).size).toBe(6);
    const forward = async (narrowed: GridScope, limit: number) => {
      const seen: number[] = [];
      const cursors: (string | null)[] = [];
      let after: string | null = null;
      do {
        const page = await gridPage(narrowed, { after: decodeCursor(after), limit });
        seen.push(...page.cards.map((c) => c.id));
        cursors.push(page.prev);
        after = page.next;
      } while (after);
      return { seen, lastPrev: cursors.at(-1) ?? null };
    };
    const defaults = { ...walkSettings };
    try {
      for (const { params, rank, want } of cases) {
        const narrowed = withFilter(await projectScope(owner.actor, own.id), new URLSearchParams(params));
        expect(searchPlan(narrowed).sortKey.rank).toBe(rank);
        const walks: [string, Partial<typeof walkSettings>][] =
          rank === "strong"
            ? [
                ["joined", { from: Number.MAX_SAFE_INTEGER }],
                ["walked", { from: 1, windowFrom: Number.MAX_SAFE_INTEGER }],
                ["walked in windows", { from: 1, windowFrom: 1, window: 4 }],
              ]
            : [["joined", {}]];
        for (const [how, settings] of walks)
          for (const limit of [1, 4, 7, 10]) {
            Object.assign(walkSettings, defaults, settings);
            const label = `${JSON.stringify(params)}, ${how}, pages of ${limit}`;
            const { seen, lastPrev } = await forward(narrowed, limit);
            expect(seen, label).toEqual(want);
            expect(new Set(seen).size, label).toBe(seen.length);
            // Back from the last page to the first, page by page: the same images in the same order.
            const back: number[] = [];
            let before = lastPrev;
            while (before) {
              const page = await gridPage(narrowed, { before: decodeCursor(before), limit });
              back.unshift(...page.cards.map((c) => c.id));
              before = page.prev;
            }
            expect([...back, ...seen.slice(seen.length - (want.length - back.length))], `${label}, back`).toEqual(want);
          }
        // A jump lands on the image at its position, whatever ties around it.
        for (const index of [1, 9, 10, 11, want.length - 1]) {
          const page = await gridPage(narrowed, { after: await cursorBefore(narrowed, index), limit: 2 });
          expect(page.cards[0]?.id, `${JSON.stringify(params)}, jump to ${index}`).toBe(want[index]);
        }
      }
    } finally {
      Object.assign(walkSettings, defaults);
    }
  });

  it("walks a common word along the project's index, also in windows of the newest images (SQLite), with the same pages, in the same order, as the join", async () => {
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

  it("walks a very common word in windows of the newest images (SQLite; PostgreSQL walks it whole), ids out of creation order, with the join's pages", async () => {
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
    const narrowed = async (q = "kiosk") => searched(await projectScope(owner.actor, own.id), q);
    const pages = async (q = "kiosk") => {
      const scoped = await narrowed(q);
      const seen: number[][] = [];
      let after: string | null = null;
      do {
        const page = await gridPage(scoped, { after: decodeCursor(after), limit: 3 });
        seen.push(page.cards.map((c) => c.id));
        after = page.next;
      } while (after);
      return seen;
    };
    /** The words a windowed walk's first page spells the prefix out as (null: the prefix is kept). */
    const spelledOut = async () => {
      const scoped = await narrowed();
      const driver = await pagePlan(scoped, searchPlan(scoped), {});
      if (driver.kind !== "walk" || !driver.windows) throw new Error(`expected a walk in windows, got ${JSON.stringify(driver)}`);
      return driver.windows.spelledOut?.map((alternative) => alternative.at(-1)!.tokens.join(" ")) ?? null;
    };
    const defaults = { ...walkSettings };
    try {
      Object.assign(walkSettings, { from: Number.MAX_SAFE_INTEGER });
      const joined = await pages();
      expect(joined.flat()).toHaveLength(10);
      const windowed = async (label: string, words: string[]) => {
        for (const window of [1, 2, 3]) {
          Object.assign(walkSettings, { from: 1, windowFrom: 1, window });
          expect(await pages(), `${label}, windows of ${window}`).toEqual(joined);
          // The page was planned as a walk in windows, with the prefix spelled out as the index's words (PostgreSQL:
          // a walk without windows, each image checked by its own row).
          const scoped = await narrowed();
          expect(await pagePlan(scoped, searchPlan(scoped), {}), `${label}, windows of ${window}`).toMatchObject({
            kind: "walk",
            from: "strong",
            windows: dialect === "sqlite" ? { first: window } : null,
          });
          if (dialect === "sqlite") expect(await spelledOut(), label).toEqual(words);
        }
      };
      await windowed("two words", ["kiosk", "kiosks"]);
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
      await windowed("a third word", ["kiosk", "kioskette", "kiosks"]);
    } finally {
      Object.assign(walkSettings, defaults);
    }
  });

  it("narrows a window's matches to the window's range of ids in the full-text index itself (the database's plan)", async () => {
    const scope = searched(await project(), "aisle");
    const plan = searchPlan(scope);
    const statement = walkStatement(await project(), plan, {
      tier: "strong",
      terms: plan.keywords!.terms,
      window: { ids: { lo: id.colaAisle!, hi: id.grocery! }, spelledOut: await prefixWords(plan.keywords!.terms, "window-plan") },
      from: null,
      edge: { rank: 1, t: 0, id: 1 },
    }).limit(3);
    expect((await statement.execute()).map((r) => r.id).sort((a, b) => a - b)).toEqual([id.colaAisle, id.grocery].sort((a, b) => a! - b!));
    if (dialect === "sqlite") {
      // FTS5 seeks the range in its lists (idxStr: M for the match, > and < for the rowid bounds).
      const steps = (await sqlitePlan(statement)).map((r) => r.detail);
      expect(steps.join(" | ")).toMatch(/SCAN images_fts VIRTUAL TABLE INDEX \d+:M\d*(><|<>)/);
    } else {
      const search = pgNodes(await postgresPlan(statement)).filter(
        (n) => n["Relation Name"] === "image_search" || /image_search/.test(n["Index Name"] ?? ""),
      );
      const conditions = search.map((n) => [n["Index Cond"], n["Recheck Cond"], n.Filter].join(" ")).join(" ");
      expect(conditions).toMatch(/image_id >= /);
      expect(conditions).toMatch(/image_id <= /);
    }
  });

  it("reads a search's matches first and finds their images by id, never walking the project's own index", async () => {
    const scope = await project();
    // A rare word (joined, not walked), and a smart search's tags.
    const searches = [
      { narrowed: searched(scope, "petrol"), driver: "keywords", matches: "m" },
      { narrowed: withFilter(scope, new URLSearchParams({ smart: "drinks", tags: "aisle,dessert" })), driver: "tags", matches: "s" },
    ] as const;
    for (const { narrowed, driver, matches } of searches) {
      expect((await gridPage(narrowed, { limit: 2 })).cards.length).toBeGreaterThan(0);
      const plan = searchPlan(narrowed);
      expect(plan.driver).toEqual({ kind: driver });
      expect(await pagePlan(narrowed, plan, {}), "a rare word's page is not walked").toEqual({ kind: driver });
      if (dialect !== "sqlite") continue; // PostgreSQL plans the join by its statistics
      const steps = await sqlitePlan(sortedPage(narrowed, plan, {}, 3));
      const page = under(steps, /^CO-ROUTINE k$|^MATERIALIZE k$/).map((r) => r.detail);
      expect(page.join(" | ")).toMatch(new RegExp(`SCAN ${matches}\\b.*SEARCH images USING INTEGER PRIMARY KEY`));
      expect(steps.map((r) => r.detail).join(" | ")).not.toMatch(/images_project/);
    }
  });

  it("computes a project's matches' rank where they are read, and looks a board's images up among its matches (PostgreSQL's plans)", async () => {
    if (dialect !== "postgres") return; // SQLite: "limit -1" keeps every match table apart (see keywordMatches)
    const scope = await project();
    const board = await boardScope(owner.actor, boardId);
    for (const narrowed of [
      searched(scope, "petrol"),
      searched(scope, "zzzz nothing"),
      withFilter(scope, new URLSearchParams({ smart: "drinks", tags: "aisle,dessert" })),
      withFilter(scope, new URLSearchParams({ q: "aisle", smart: "drinks", tags: "aisle,dessert" })),
    ]) {
      const plan = searchPlan(narrowed);
      const nodes = pgNodes(await postgresPlan(sortedPage(narrowed, plan, {}, 3)));
      const label = JSON.stringify(narrowed.filter);
      // The rank is computed in the matches' own scan, so the index's documents are never carried into the join (nor
      // sorted by the rank below it: no incremental sort).
      expect(
        nodes.flatMap((n) => n.Output ?? []),
        label,
      ).not.toContain("image_search.doc");
      expect(
        nodes.map((n) => n["Node Type"]),
        label,
      ).not.toContain("Incremental Sort");
    }
    // A board's matches narrow its rows: they stay in the join, so each of the board's images can be looked up among
    // them by its id (planned apart, every match would be read).
    const onBoard = searched(board, "aisle");
    const boardPlan = pgNodes(await postgresPlan(sortedPage(onBoard, searchPlan(onBoard), {}, 3)));
    expect(boardPlan.some((n) => n["Relation Name"] === "image_search" && /image_search\.image_id = /.test(n["Index Cond"] ?? ""))).toBe(
      true,
    );
  });

  it("sorts only a joined page's keys and reads its cards' columns for the page's rows alone", async () => {
    const scope = withFilter(await project(), new URLSearchParams({ smart: "drinks", tags: "aisle,dessert" }));
    const page = await gridPage(scope, { limit: 2 });
    expect(page.cards.length).toBeGreaterThan(0);
    expect(page.cards[0]!.title, "the cards still carry their columns").toBeTruthy();
    const plan = searchPlan(scope);
    expect(plan.sortKey).toEqual({ rank: "tags", time: "images.created_at", id: "images.id" });
    const statement = sortedPage(scope, plan, {}, 3);
    if (dialect === "sqlite") {
      const steps = await sqlitePlan(statement);
      // The sort runs inside the keys' subquery; the statement itself then finds each of its rows' images by id.
      expect(
        under(steps, /^CO-ROUTINE k$|^MATERIALIZE k$/).map((r) => r.detail),
        "the sort is the keys'",
      ).toContain("USE TEMP B-TREE FOR ORDER BY");
      const outer = steps.filter((r) => r.parent === 0).map((r) => r.detail);
      expect(outer.join(" | "), "the page's rows are joined to their images after the sort").toMatch(
        /SCAN k\b.*SEARCH images USING INTEGER PRIMARY KEY/,
      );
    } else {
      const nodes = pgNodes(await postgresPlan(statement));
      // The sort of the matches (by rank, time, id) carries their keys alone, never a card's column.
      const sorts = nodes.filter((n) => n["Node Type"] === "Sort" && n["Sort Key"]?.some((k) => /created_at/.test(k)));
      expect(sorts.length, "the matches are sorted").toBeGreaterThan(0);
      for (const sort of sorts) {
        const carried = pgNodes(sort).flatMap((n) => n.Output ?? []);
        expect(carried.join(" "), "the sort carries no card column").not.toMatch(/title|keywords|thumb_key/);
      }
      // The sorted keys are cut to the page (a limit right above their sort), and the cards' columns are read above it.
      const limited = nodes.filter((n) => n["Node Type"] === "Limit" && n.Plans?.some((child) => sorts.includes(child)));
      expect(limited.length, "the page's keys are limited after their sort").toBeGreaterThan(0);
      const readsCards = (n: PgPlanNode) => n.Output?.some((o) => /\.title$/.test(o));
      expect(nodes.some(readsCards), "the cards still carry their columns").toBe(true);
      expect(limited.flatMap(pgNodes).some(readsCards), "no card column is read before the limit").toBe(false);
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
