import { sql } from "kysely";
import { db } from "~/db/connection.server";
import { selectedImageIds } from "./grid.server";
import { scopeKey, scopeVersion, type OneProjectScope } from "./scope.server";

/**
 * The attribute filters of a grid (spec 1, Sidebar; the MIX rule): per attribute of the project, the values its
 * images hold in the scope (unfiltered: a value does not vanish from the list because of a choice), each with the
 * number of images it would give with the search and the *other* attributes' choices applied (standard faceting),
 * and whether it is chosen. A value that would give none is shown, marked, and cannot be chosen.
 */
export interface FacetValue {
  value: string;
  count: number;
  chosen: boolean;
}
export interface Facet {
  id: number;
  name: string;
  values: FacetValue[];
}

const ALL = { all: true, ids: [] };

type Counts = Map<string, number>;
const keyOf = (attributeId: number, value: string) => `${attributeId}\u0000${value}`;

/**
 * Counting reads every attribute value of the scope's images (a few hundred thousand index entries on a 100k project),
 * yet the counts change only when the scope's version does (every write to an image, its attribute values or a board
 * moves it on, see write.server.ts). So they are kept per scope, filter and version, like the grid's totals.
 */
const cache = new Map<string, Counts>();
const MAX_CACHED = 500;

/** Values and counts of the attributes in `only` (or every attribute), over the images of a scope. */
async function valueCounts(scope: OneProjectScope, only?: number): Promise<Counts> {
  const key = `${scopeKey(scope)}|${only ?? "*"}@${scopeVersion(scope)}`;
  const known = cache.get(key);
  if (known) return known;
  const counts = await countValues(scope, only);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(key, counts);
  return counts;
}

async function countValues(scope: OneProjectScope, only?: number): Promise<Counts> {
  let q = db()
    .selectFrom("image_attribute_values as av")
    .select(["av.attribute_id", "av.value", sql<number>`count(*)`.as("n")])
    .where("av.image_id", "in", selectedImageIds(scope, ALL))
    .groupBy(["av.attribute_id", "av.value"]);
  if (only !== undefined) q = q.where("av.attribute_id", "=", only);
  const counts: Counts = new Map();
  for (const r of await q.execute()) counts.set(keyOf(r.attribute_id, r.value), Number(r.n));
  return counts;
}

export async function attributeFacets(scope: OneProjectScope): Promise<Facet[]> {
  const chosen = scope.filter?.attrs ?? {};
  const narrowedTo = (attrs: Record<string, string[]>) => ({ ...scope, filter: { ...scope.filter, attrs } });
  const [attributes, present, counted, ...own] = await Promise.all([
    db()
      .selectFrom("attributes")
      .select(["id", "name"])
      .where("project_id", "=", scope.project.id)
      .where("active", "=", 1)
      .orderBy("name")
      .execute(),
    // What the scope holds, before any filter: the list of values.
    valueCounts({ ...scope, filter: undefined }),
    // Every attribute without a choice of its own: counted with the whole filter.
    valueCounts(scope),
    // An attribute with choices: counted with the search and the others' choices, not its own.
    ...Object.keys(chosen).map((id) =>
      valueCounts(narrowedTo(Object.fromEntries(Object.entries(chosen).filter(([other]) => other !== id))), Number(id)),
    ),
  ]);
  const ownCounts = new Map(Object.keys(chosen).map((id, i) => [Number(id), own[i]!]));
  const values = new Map<number, string[]>();
  for (const key of present.keys()) {
    const [id, value] = key.split("\u0000") as [string, string];
    const list = values.get(Number(id)) ?? [];
    list.push(value);
    values.set(Number(id), list);
  }
  return attributes
    .map((a) => {
      const counts = ownCounts.get(a.id) ?? counted;
      const picked = chosen[String(a.id)] ?? [];
      return {
        id: a.id,
        name: a.name,
        values: (values.get(a.id) ?? [])
          .sort((x, y) => x.localeCompare(y))
          .map((value) => ({ value, count: counts.get(keyOf(a.id, value)) ?? 0, chosen: picked.includes(value) })),
      };
    })
    .filter((f) => f.values.length > 0);
}
