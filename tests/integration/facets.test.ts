import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { createBoard } from "~/models/boards.server";
import { countSelection } from "~/models/bulk.server";
import { attributeFacets, facetTiming } from "~/models/facets.server";
import { gridTotal } from "~/models/grid.server";
import { insertImage } from "~/models/images.server";
import { boardScope, projectScope, withFilter, type OneProjectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

/** The images of the fixture: a keyword and a value per attribute (or none). */
const IMAGES: { keyword: string; color?: string; size?: string }[] = [
  { keyword: "cola", color: "red", size: "S" },
  { keyword: "cola", color: "red", size: "M" },
  { keyword: "cola", color: "blue", size: "M" },
  { keyword: "cola", color: "green" },
  { keyword: "cola", size: "S" },
  { keyword: "juice", color: "red", size: "S" },
  { keyword: "juice", color: "blue", size: "L" },
  { keyword: "cola", color: "blue", size: "L" },
];

type Chosen = { color?: readonly string[]; size?: readonly string[] };

/** The MIX rule computed here from the fixture, independently of the SQL: OR within an attribute, AND across. */
function expected(q: string | null, chosen: Chosen, attribute: "color" | "size", value: string) {
  return IMAGES.filter(
    (img) =>
      (q === null || img.keyword === q) &&
      (Object.entries(chosen) as ["color" | "size", readonly string[]][]).every(
        ([a, values]) => a === attribute || values.includes(img[a] ?? ""),
      ) &&
      img[attribute] === value,
  ).length;
}

describe.each(dialects)("attribute filters and their counts (%s)", (dialect) => {
  let t: TestDatabase;
  let scope: () => ReturnType<typeof projectScope>;
  let color: number;
  let size: number;
  let boardId: string;
  let owner: Awaited<ReturnType<typeof makeUser>>;
  const ids: number[] = [];

  const filtered = <S extends OneProjectScope>(s: S, q: string | null, chosen: Chosen) => {
    const params = new URLSearchParams(q ? { q } : {});
    for (const v of chosen.color ?? []) params.append("f", `${color}:${v}`);
    for (const v of chosen.size ?? []) params.append("f", `${size}:${v}`);
    return withFilter(s, params);
  };

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    owner = await makeUser();
    const p = await makeProject([{ actor: owner.actor, role: "manager" }]);
    scope = () => projectScope(owner.actor, p.id);
    color = await createAttribute(await scope(), { name: "Color", code: "COL", type: 3 });
    size = await createAttribute(await scope(), { name: "Size", code: "SIZ", type: 3 });
    for (const [i, img] of IMAGES.entries())
      ids.push(await insertImage(await scope(), await storedFakeFile(900 + i), meta(`Image ${i}`, [img.keyword])));
    await setAttributeValues(
      await scope(),
      IMAGES.flatMap((img, i) => [
        ...(img.color ? [{ imageId: ids[i]!, attributeId: color, value: img.color }] : []),
        ...(img.size ? [{ imageId: ids[i]!, attributeId: size, value: img.size }] : []),
      ]),
    );
    boardId = (await createBoard(await scope(), { title: "Some", imageIds: ids.slice(0, 3) })).id;
  });
  afterAll(() => t.drop());

  for (const [q, chosen] of [
    [null, {}],
    [null, { color: ["red"] }],
    [null, { color: ["red", "blue"] }],
    [null, { color: ["red", "blue"], size: ["M"] }],
    ["cola", { size: ["S", "L"] }],
    ["cola", { color: ["green"], size: ["S"] }],
  ] as const)
    it(`counts every value by the MIX rule: ${q ?? "no search"}, ${JSON.stringify(chosen)}`, async () => {
      const s = filtered(await scope(), q, chosen);
      const facets = await attributeFacets(s);
      expect(facets.map((f) => f.name)).toEqual(["Color", "Size"]);
      for (const [facet, attribute] of [
        [facets[0]!, "color"],
        [facets[1]!, "size"],
      ] as const)
        for (const v of facet.values) {
          expect(v.count, `${attribute}=${v.value}`).toBe(expected(q, chosen, attribute, v.value));
          expect(v.chosen).toBe(((chosen as Record<string, readonly string[]>)[attribute] ?? []).includes(v.value));
        }
      // The grid holds what every choice together gives.
      const all = IMAGES.filter(
        (img) =>
          (q === null || img.keyword === q) &&
          (Object.entries(chosen) as ["color" | "size", readonly string[]][]).every(([a, values]) => values.includes(img[a] ?? "")),
      ).length;
      expect(await gridTotal(s)).toBe(all);
      expect(await countSelection(s, { all: true, ids: [] })).toBe(all);
    });

  it("lists a value that gives nothing under the current choices, with 0, so it can be marked and disabled", async () => {
    const facets = await attributeFacets(filtered(await scope(), "juice", { size: ["L"] }));
    expect(facets[0]!.values).toEqual([
      { value: "blue", count: 1, chosen: false },
      { value: "green", count: 0, chosen: false },
      { value: "red", count: 0, chosen: false },
    ]);
  });

  it("keeps a board's filters to the board's images, and a foreign attribute id finds nothing", async () => {
    const board = await boardScope(owner.actor, boardId);
    const facets = await attributeFacets(board);
    expect(facets[0]!.values.map((v) => [v.value, v.count])).toEqual([
      ["blue", 1],
      ["red", 2],
    ]);
    expect(await gridTotal(withFilter(await scope(), new URLSearchParams({ f: "999999:red" })))).toBe(0);
    // Malformed choices are ignored, not errors.
    for (const f of ["red", ":red", "abc:red", `${color}:`, `${color}:${"x".repeat(500)}`])
      expect(await gridTotal(withFilter(await scope(), new URLSearchParams({ f }))), f).toBe(IMAGES.length);
  });

  it("moves the version of every board holding an image whose attribute values change, so its cached counts follow", async () => {
    const board = await boardScope(owner.actor, boardId);
    expect((await attributeFacets(board))[0]!.values.map((v) => [v.value, v.count])).toEqual([
      ["blue", 1],
      ["red", 2],
    ]);
    await setAttributeValues(await scope(), [{ imageId: ids[0]!, attributeId: color, value: "green" }]);
    const after = await boardScope(owner.actor, boardId);
    expect(after.board.version).toBeGreaterThan(board.board.version);
    // The counts are kept per version: the board's new version counts afresh.
    expect((await attributeFacets(after))[0]!.values.map((v) => [v.value, v.count])).toEqual([
      ["blue", 1],
      ["green", 1],
      ["red", 1],
    ]);
  });

  it("on a scope whose counting is slow, answers an edit with the previous counts while it counts the new version", async () => {
    const counts = async () => (await attributeFacets(await scope()))[0]!.values.map((v) => `${v.value}:${v.count}`);
    facetTiming.slowMs = 0; // every count is "slow": as on a 1M project (bench P5b)
    try {
      // The earlier tests' edit (image 1 red → green) is counted first.
      await expect.poll(counts).toEqual(["blue:3", "green:2", "red:2"]);
      const before = await counts();
      const image = ids[1]!; // red → yellow
      await setAttributeValues(await scope(), [{ imageId: image, attributeId: color, value: "yellow" }]);
      // The first look after the edit gets the counts of the version before, at once...
      expect(await counts()).toEqual(before);
      // ...and once the background count is in, the new ones.
      await expect.poll(counts).toEqual(["blue:3", "green:2", "red:1", "yellow:1"]);
    } finally {
      facetTiming.slowMs = 1000;
    }
  });

  it("says nothing when the project has no attribute values", async () => {
    const other = await makeProject([{ actor: owner.actor }]);
    expect(await attributeFacets(await projectScope(owner.actor, other.id))).toEqual([]);
  });
});
