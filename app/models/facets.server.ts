import { remember } from "~/lib/bounded-cache";
import { sql } from "kysely";
import { sha256 } from "~/lib/crypto.server";
import { db } from "~/db/connection.server";
import { selectedImageIds } from "./grid.server";
import { filterSearch } from "~/lib/grid-filter";
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
 * Counting reads every attribute value of the scope's images (a few hundred thousand index entries on a 100k project;
 * with a search on a 1M project about half a second: bench P5b), yet the counts change only when the scope's version does (every write to an
 * image, its attribute values or a board moves it on, see write.server.ts). So they are kept per scope, filter and
 * version, like the grid's totals. When the last count of a scope and filter was slow, a newer version is counted in
 * the background while the previous counts answer: after an edit on a huge project the page stays fast, its counts
 * one write behind for a few seconds ('New Filters Loaded' then offers the new values).
 */
const cache = new Map<string, Promise<Counts>>();
const latest = new Map<string, { version: number; counts: Counts; ms: number }>();
const MAX_CACHED = 500;
/**
 * How slow a count must have been for the next version to be counted in the background: well above a 100k project's
 * counts (tens of ms), well below a 1M project's (seconds). A setting so tests can take the slow path.
 */
export const facetTiming = { slowMs: 1000 };

/**
 * Values and counts of the attributes in `only` (or every attribute), over the images of a scope. `listOnly`: the
 * values alone (their counts are not needed, so a whole project's are found by index seeks instead of a count).
 */
function valueCounts(scope: OneProjectScope, only?: number, listOnly = false): Promise<Counts> {
  const base = `${scopeKey(scope)}|${only ?? "*"}${listOnly ? "|list" : ""}`;
  const version = scopeVersion(scope);
  const key = `${base}@${version}`;
  const known = cache.get(key);
  const previous = latest.get(base);
  if (known) return previous && previous.version < version && previous.ms >= facetTiming.slowMs ? Promise.resolve(previous.counts) : known;
  // The promise is kept, so the open tabs' freshness checks right after a write share one count.
  const started = performance.now();
  const counts = listOnly && wholeProject(scope) ? listProjectValues(scope.project.id) : countValues(scope, only);
  counts.then(
    (c) => {
      const now = latest.get(base);
      if (!now || now.version <= version) remember(latest, base, { version, counts: c, ms: performance.now() - started }, MAX_CACHED);
    },
    () => cache.delete(key),
  );
  remember(cache, key, counts, MAX_CACHED);
  return previous && previous.version < version && previous.ms >= facetTiming.slowMs ? Promise.resolve(previous.counts) : counts;
}

/**
 * A whole project without a filter holds every value of its attributes: an image's values are deleted with it and
 * are only ever set on images of the attribute's project. So the (attribute_id, value, image_id) index answers alone,
 * without visiting the images (bench P5b).
 */
const wholeProject = (scope: OneProjectScope) => scope.kind === "project" && filterSearch(scope.filter) === "";

async function countValues(scope: OneProjectScope, only?: number): Promise<Counts> {
  let q = db()
    .selectFrom("image_attribute_values as av")
    .select(["av.attribute_id", "av.value", sql<number>`count(*)`.as("n")])
    .groupBy(["av.attribute_id", "av.value"]);
  q = wholeProject(scope)
    ? q.where("av.attribute_id", "in", (eb) => eb.selectFrom("attributes").select("id").where("project_id", "=", scope.project.id))
    : q.where("av.image_id", "in", selectedImageIds(scope, ALL));
  if (only !== undefined) q = q.where("av.attribute_id", "=", only);
  const counts: Counts = new Map();
  for (const r of await q.execute()) counts.set(keyOf(r.attribute_id, r.value), Number(r.n));
  return counts;
}

/**
 * The distinct values of a project's attributes by a loose index scan: per attribute, the next value after the last
 * one found, one index seek each (a few dozen seeks instead of reading millions of index entries). Counts are 1.
 */
async function listProjectValues(projectId: number): Promise<Counts> {
  const rows = await sql<{ attribute_id: number; value: string }>`
    with recursive v(attribute_id, value) as (
      select a.id, (select min(av.value) from image_attribute_values av where av.attribute_id = a.id)
      from attributes a where a.project_id = ${projectId}
      union all
      select v.attribute_id,
        (select min(av.value) from image_attribute_values av where av.attribute_id = v.attribute_id and av.value > v.value)
      from v where v.value is not null
    )
    select attribute_id, value from v where value is not null`.execute(db());
  return new Map(rows.rows.map((r) => [keyOf(Number(r.attribute_id), r.value), 1]));
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
    valueCounts({ ...scope, filter: undefined }, undefined, true),
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

/**
 * What can be chosen in a scope's attribute filters (attributes and their values, not the counts), as a short
 * fingerprint: when it changes while a page is open, the page offers 'New Filters Loaded'. Null without filters.
 */
export function facetsFingerprint(facets: Facet[] | null): string | null {
  if (!facets?.length) return null;
  return sha256(JSON.stringify(facets.map((f) => [f.id, f.name, f.values.map((v) => v.value)]))).slice(0, 16);
}
