import { remember } from "~/lib/bounded-cache";
import { sql } from "kysely";
import { sha256 } from "~/lib/crypto.server";
import { db } from "~/db/connection.server";
import { selectedImageIds } from "./grid.server";
import { keywordIds, termsOf } from "./search.server";
import { hasSmart } from "~/lib/smart-tags";
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

/** A combination of attribute values (attribute id → value) and how many images of a set hold exactly it. */
interface Combo {
  values: [number, string][];
  n: number;
}

/**
 * Counting groups the images of the scope's search by their folded attribute values (`image_facets`, decision 0017):
 * one pass over the matched images, a few hundred combinations back, from which every attribute's counts follow
 * under the MIX rule in memory (a 1M project searched for a word in 10% of it: about 100 ms, bench P5b). The
 * combinations change only when the scope's version does (every write to an image, its attribute values or a board
 * moves it on, see write.server.ts), and not with the attribute choices: they are kept per scope, search and version,
 * like the grid's totals. When the last count of a scope and search was slow, a newer version is counted in the
 * background while the previous combinations answer: after an edit on a huge project the page stays fast, its counts
 * one write behind for a moment ('New Filters Loaded' then offers the new values).
 */
const cache = new Map<string, Promise<Combo[] | null>>();
const latest = new Map<string, { version: number; combos: Combo[] | null; ms: number }>();
/** With at most comboCap.max combinations an entry, the kept counts stay within a few dozen megabytes. */
const MAX_CACHED = 200;
/**
 * Images that hold the same values share a combination, so a search returns a few hundred (499 on the bench's 1M
 * project). A project whose values are nearly unique per image could return one per image: past this many, the
 * counts are asked of the database per attribute instead (countInSql). A setting so tests can take that path.
 */
export const comboCap = { max: 2000 };
/**
 * How slow a count must have been for the next version to be counted in the background: well above a 100k project's
 * counts (tens of ms) and a 1M project's search (about 100 ms). A setting so tests can take the slow path.
 */
export const facetTiming = { slowMs: 1000 };

/**
 * What is asked of a scope's images: which values occur (`list`), the combinations of the images of its search
 * (`combos`; null past comboCap.max), or how many images of the scope, every choice applied, hold each value
 * (`values`, each a combination of one value). On a whole project the list and the values have cheaper ways of
 * their own; elsewhere the combinations answer the list too, so one count serves both.
 */
type Need = "list" | "values" | "combos";

function combosOf(scope: OneProjectScope, need: Need): Promise<Combo[] | null> {
  const target: OneProjectScope = need === "values" ? scope : { ...scope, filter: { ...scope.filter, attrs: undefined } };
  const whole = wholeProject(target);
  const base = `${scopeKey(target)}|${need === "values" || whole ? need : "combos"}`;
  const version = scopeVersion(scope);
  const key = `${base}@${version}`;
  const previous = latest.get(base);
  const stale = previous && previous.version < version && previous.ms >= facetTiming.slowMs ? Promise.resolve(previous.combos) : null;
  const known = cache.get(key);
  if (known) return stale ?? known;
  // The promise is kept, so the open tabs' freshness checks right after a write share one count.
  const started = performance.now();
  const combos =
    need === "values"
      ? valueCounts(target, whole)
      : whole && need === "list"
        ? listProjectValues(scope.project.id)
        : countCombos(target, whole);
  combos.then(
    (c) => {
      const now = latest.get(base);
      if (!now || now.version <= version) remember(latest, base, { version, combos: c, ms: performance.now() - started }, MAX_CACHED);
    },
    () => cache.delete(key),
  );
  remember(cache, key, combos, MAX_CACHED);
  return stale ?? combos;
}

/** A project with nothing narrowing it (text without a word narrows nothing in a project, as in the grid). */
const wholeProject = (scope: OneProjectScope) =>
  scope.kind === "project" &&
  !termsOf(scope.filter?.q).length &&
  !hasSmart(scope.filter) &&
  !scope.filter?.review &&
  !scope.filter?.takenFrom &&
  !scope.filter?.takenTo &&
  !Object.keys(scope.filter?.attrs ?? {}).length;

/**
 * The rows of `image_facets` exist for the images that hold values, with the image's project: so a project's keyword
 * search starts from the full-text matches (of any project) and keeps its project's rows, without visiting `images`
 * (images are deleted, never hidden). Anything else (a board, a smart search, a review filter) starts from the grid's
 * own selection. SQLite takes a cross join's tables in the order written: the matches drive, each looked up by
 * primary key (left to itself it walked the project's index against the matches). Null past comboCap.max.
 */
async function countCombos(scope: OneProjectScope, whole: boolean): Promise<Combo[] | null> {
  const terms = termsOf(scope.filter?.q);
  const keywordOnly =
    scope.kind === "project" && !hasSmart(scope.filter) && !scope.filter?.review && !scope.filter?.takenFrom && !scope.filter?.takenTo;
  const ids = whole ? null : keywordOnly ? keywordIds(terms, "anywhere") : selectedImageIds(scope, ALL);
  const rows = await (
    ids
      ? db().selectFrom(ids.as("s")).crossJoin("image_facets as f").whereRef("f.image_id", "=", "s.id")
      : db().selectFrom("image_facets as f")
  )
    .select(["f.facet_key", sql<number>`count(*)`.as("n")])
    .where("f.project_id", "=", scope.project.id)
    .groupBy("f.facet_key")
    .limit(comboCap.max + 1)
    .execute();
  if (rows.length > comboCap.max) return null;
  return rows.map((r) => ({ values: JSON.parse(r.facet_key) as [number, string][], n: Number(r.n) }));
}

/**
 * Per value, the images of the scope holding it, every choice of the scope applied. A whole project's come from the
 * (attribute_id, value, image_id) index alone: values are only ever set on images of the attribute's project and go
 * with their image.
 */
async function valueCounts(scope: OneProjectScope, whole: boolean): Promise<Combo[]> {
  const rows = await db()
    .selectFrom("image_attribute_values as av")
    .select(["av.attribute_id", "av.value", sql<number>`count(*)`.as("n")])
    .where((eb) =>
      whole
        ? eb("av.attribute_id", "in", eb.selectFrom("attributes").select("id").where("project_id", "=", scope.project.id))
        : eb("av.image_id", "in", selectedImageIds(scope, ALL)),
    )
    .groupBy(["av.attribute_id", "av.value"])
    .execute();
  return rows.map((r) => ({ values: [[r.attribute_id, r.value]], n: Number(r.n) }));
}

/**
 * The distinct values of a project's attributes by a loose index scan: per attribute, the next value after the last
 * one found, one index seek each (a few dozen seeks instead of reading millions of index entries).
 */
async function listProjectValues(projectId: number): Promise<Combo[]> {
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
  return rows.rows.map((r) => ({ values: [[Number(r.attribute_id), r.value]], n: 1 }));
}

/**
 * Per attribute and value, the images that would remain with that value chosen and every *other* attribute's choices
 * applied (standard faceting; the MIX rule: values of one attribute OR, attributes AND). A choice on an attribute
 * that is not an active one of the project matches nothing, as in the grid.
 */
function countChoices(combos: Combo[], chosen: Record<string, string[]>, active: Set<number>): Map<number, Map<string, number>> {
  const wanted = Object.entries(chosen).map(([id, values]) => [Number(id), new Set(values)] as const);
  const counts = new Map<number, Map<string, number>>();
  for (const combo of combos) {
    const held = new Map(combo.values);
    // Which choices the combination fails: with two or more, no attribute's count takes it; with one, only that one's.
    const failed = wanted.filter(([id, values]) => !active.has(id) || !values.has(held.get(id) as string));
    if (failed.length > 1) continue;
    for (const [id, value] of combo.values) {
      if (!active.has(id) || (failed.length === 1 && failed[0]![0] !== id)) continue;
      const perValue = counts.get(id) ?? new Map<string, number>();
      perValue.set(value, (perValue.get(value) ?? 0) + combo.n);
      counts.set(id, perValue);
    }
  }
  return counts;
}

/**
 * The MIX rule asked of the database, for a search with too many combinations: the attributes without a choice
 * counted with every choice applied, each attribute with choices with the others' only.
 */
async function countInSql(scope: OneProjectScope, chosen: Record<string, string[]>, active: Set<number>) {
  const withChoices = (attrs: Record<string, string[]>): OneProjectScope => ({ ...scope, filter: { ...scope.filter, attrs } });
  const counts = countChoices((await combosOf(scope, "values")) ?? [], {}, active);
  for (const id of Object.keys(chosen)) {
    const others = Object.fromEntries(Object.entries(chosen).filter(([other]) => other !== id));
    const own = countChoices((await combosOf(withChoices(others), "values")) ?? [], {}, active);
    counts.set(Number(id), own.get(Number(id)) ?? new Map());
  }
  return counts;
}

export async function attributeFacets(scope: OneProjectScope): Promise<Facet[]> {
  const chosen = scope.filter?.attrs ?? {};
  const unfiltered = { ...scope, filter: undefined };
  const [attributes, present, searched] = await Promise.all([
    db()
      .selectFrom("attributes")
      .select(["id", "name"])
      .where("project_id", "=", scope.project.id)
      .where("active", "=", 1)
      .orderBy("name")
      .execute(),
    // What the scope holds, before any filter: the list of values.
    combosOf(unfiltered, "list"),
    // The images of the search, before the attribute choices (a whole project without any: its values' counts).
    wholeProject(scope) ? combosOf(scope, "values") : combosOf(scope, "combos"),
  ]);
  const active = new Set(attributes.map((a) => a.id));
  const counts = searched ? countChoices(searched, chosen, active) : await countInSql(scope, chosen, active);
  const values = new Map<number, Set<string>>();
  for (const combo of present ?? (await combosOf(unfiltered, "values")) ?? [])
    for (const [id, value] of combo.values) {
      const list = values.get(id) ?? new Set<string>();
      list.add(value);
      values.set(id, list);
    }
  return attributes
    .map((a) => {
      const picked = chosen[String(a.id)] ?? [];
      return {
        id: a.id,
        name: a.name,
        values: [...(values.get(a.id) ?? [])]
          .sort((x, y) => x.localeCompare(y))
          .map((value) => ({ value, count: counts.get(a.id)?.get(value) ?? 0, chosen: picked.includes(value) })),
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
