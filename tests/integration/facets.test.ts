import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importValues } from "~/models/attribute-import.server";
import {
  assignAttribute,
  assignAttributeBulk,
  createAttribute,
  deleteAttribute,
  removeAttributeValue,
  setAttributeValues,
  updateAttributes,
} from "~/models/attributes.server";
import { db } from "~/db/connection.server";
import { createBoard } from "~/models/boards.server";
import { countSelection, deleteImagesBulk } from "~/models/bulk.server";
import { attributeFacets, comboCap, facetTiming } from "~/models/facets.server";
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
    it(`counts every value by the MIX rule: ${q ?? "no search"}, ${JSON.stringify(chosen)}; the same past the combination cap`, async () => {
      const s = filtered(await scope(), q, chosen);
      const facets = await attributeFacets(s);
      // Past the cap the database counts per attribute (countInSql): the same counts. A new version, so nothing is kept.
      comboCap.max = 0;
      try {
        const bySql = await attributeFacets({ ...s, project: { ...s.project, version: s.project.version - 1_000_000 } });
        expect(bySql).toEqual(facets);
      } finally {
        comboCap.max = 2000;
      }
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
    // (An attribute id past 32 bits made PostgreSQL refuse the page's queries.)
    for (const f of ["red", ":red", "abc:red", `${color}:`, `${color}:${"x".repeat(500)}`, "3000000000:red", "0:red"]) {
      const s = withFilter(await scope(), new URLSearchParams({ f }));
      expect(await gridTotal(s), f).toBe(IMAGES.length);
      expect(
        (await attributeFacets(s))[0]!.values.every((v) => !v.chosen),
        f,
      ).toBe(true);
    }
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

  it("keeps each image's folded values (image_facets) equal to its values through every kind of write", async () => {
    const p = await makeProject([{ actor: owner.actor, role: "manager" }]);
    const s = () => projectScope(owner.actor, p.id);
    const a = await createAttribute(await s(), { name: "A", code: "A", type: 3 });
    const b = await createAttribute(await s(), { name: "B", code: "B", type: 3 });
    const imgs: number[] = [];
    for (let i = 0; i < 3; i++) imgs.push(await insertImage(await s(), await storedFakeFile(950 + i), meta(`F ${i}`, ["f"])));
    /** What the triggers keep, against the values themselves, image by image. */
    const folded = async () =>
      Object.fromEntries(
        (
          await db().selectFrom("image_facets").select(["image_id", "project_id", "facet_key"]).where("project_id", "=", p.id).execute()
        ).map((r) => [r.image_id, JSON.parse(r.facet_key) as [number, string][]]),
      );
    const truth = async () => {
      const rows = await db()
        .selectFrom("image_attribute_values")
        .select(["image_id", "attribute_id", "value"])
        .where("image_id", "in", imgs)
        .orderBy("image_id")
        .orderBy("attribute_id")
        .execute();
      const out: Record<number, [number, string][]> = {};
      for (const r of rows) (out[r.image_id] ??= []).push([r.attribute_id, r.value]);
      return out;
    };
    const check = async (step: string) => expect(await folded(), step).toEqual(await truth());

    await setAttributeValues(await s(), [
      { imageId: imgs[0]!, attributeId: b, value: "b0" },
      { imageId: imgs[0]!, attributeId: a, value: "a0" },
      { imageId: imgs[1]!, attributeId: a, value: 'quote " and , comma' },
    ]);
    await check("insert");
    expect((await folded())[imgs[0]!]).toEqual([
      [a, "a0"],
      [b, "b0"],
    ]);
    await setAttributeValues(await s(), [{ imageId: imgs[0]!, attributeId: a, value: "a1" }]);
    await check("update");
    await assignAttribute(await s(), imgs[2]!, { attributeId: a, value: "panel", replace: false });
    await check("the panel's Assign");
    await importValues(await s(), [
      { imageId: imgs[2]!, attributeId: a, value: "csv" },
      { imageId: imgs[1]!, attributeId: b, value: "csv" },
    ]);
    await check("a CSV import's batch");
    // A bulk assignment on a grid filtered by the very attribute it replaces: the filtered set is taken before the
    // write (afterwards it would no longer hold these images).
    const onB = withFilter(await s(), new URLSearchParams({ f: `${b}:csv` }));
    await assignAttributeBulk(onB, { all: true, ids: [] }, { attributeId: b, value: "bulk", replace: true });
    await check("bulk assign with replace, filtered on its attribute");
    expect((await folded())[imgs[1]!]).toContainEqual([b, "bulk"]);
    await assignAttributeBulk(await s(), { all: true, ids: [] }, { attributeId: b, value: "bulk", replace: true });
    await check("bulk assign with replace");
    expect(Object.keys(await folded())).toHaveLength(3);
    await removeAttributeValue(await s(), imgs[2]!, b);
    await check("remove a value");
    expect((await folded())[imgs[2]!]).toEqual([[a, "csv"]]);
    await deleteImagesBulk(await s(), { all: false, ids: [imgs[1]!] });
    await check("delete an image");
    await deleteAttribute(await s(), b);
    await check("delete an attribute");
    await removeAttributeValue(await s(), imgs[2]!, a);
    await check("remove the last value");
    expect(await folded()).toEqual({ [imgs[0]!]: [[a, "a1"]] });
  });

  it("applies the MIX rule over three attributes, and a choice on a deactivated attribute matches nothing", async () => {
    const p = await makeProject([{ actor: owner.actor, role: "manager" }]);
    const s = () => projectScope(owner.actor, p.id);
    const [x, y, z] = [
      await createAttribute(await s(), { name: "X", code: "X", type: 3 }),
      await createAttribute(await s(), { name: "Y", code: "Y", type: 3 }),
      await createAttribute(await s(), { name: "Z", code: "Z", type: 3 }),
    ];
    // Every combination of x ∈ {1, 2}, y ∈ {1, 2}, z ∈ {1, 2}, one image each; image 8 has no z.
    const combos = [1, 2].flatMap((xv) => [1, 2].flatMap((yv) => [1, 2].map((zv) => [xv, yv, zv] as const)));
    const values: { imageId: number; attributeId: number; value: string }[] = [];
    for (const [i, [xv, yv, zv]] of combos.entries()) {
      const id = await insertImage(await s(), await storedFakeFile(960 + i), meta(`M ${i}`, ["m"]));
      values.push({ imageId: id, attributeId: x!, value: `x${xv}` }, { imageId: id, attributeId: y!, value: `y${yv}` });
      if (i < 7) values.push({ imageId: id, attributeId: z!, value: `z${zv}` });
    }
    await setAttributeValues(await s(), values);
    const chosen = new URLSearchParams();
    for (const f of [`${x}:x1`, `${y}:y1`, `${y}:y2`, `${z}:z1`]) chosen.append("f", f);
    const counts = async () =>
      Object.fromEntries(
        (await attributeFacets(withFilter(await s(), chosen))).map((f) => [f.name, f.values.map((v) => `${v.value}:${v.count}`)]),
      );
    // X: y ∈ {1,2} and z = 1 → one image per x value. Y: x = 1 and z = 1 → one per y. Z: x = 1 (any y) → z1 2, z2 2.
    expect(await counts()).toEqual({ X: ["x1:2", "x2:2"], Y: ["y1:1", "y2:1"], Z: ["z1:2", "z2:2"] });
    expect(await gridTotal(withFilter(await s(), chosen))).toBe(2);
    await updateAttributes(await s(), [{ id: z!, name: "Z", code: "Z", active: false }]);
    // Z is hidden, and its choice (still in the URL) finds nothing: every other count is 0, as the grid is empty.
    expect(await counts()).toEqual({ X: ["x1:0", "x2:0"], Y: ["y1:0", "y2:0"] });
    expect(await gridTotal(withFilter(await s(), chosen))).toBe(0);
  });

  it("says nothing when the project has no attribute values", async () => {
    const other = await makeProject([{ actor: owner.actor }]);
    expect(await attributeFacets(await projectScope(owner.actor, other.id))).toEqual([]);
  });
});
