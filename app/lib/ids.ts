/** The largest id a row can have: id columns are 32-bit integers (PostgreSQL refuses a larger value outright). */
export const MAX_ID = 2_147_483_647;

/**
 * An id from a URL or a form: digits only, 1 to MAX_ID. Anything else is no id at all, so a URL like
 * /client/abc answers "not found" with the id echoed as typed, never "NaN", a rounded number or a database error.
 */
export function parseId(raw: unknown): number | null {
  const text = typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw.trim() : "";
  if (!/^\d{1,10}$/.test(text)) return null;
  const id = Number(text);
  return id > 0 && id <= MAX_ID ? id : null;
}

/** The numbers of a list that can be row ids, each once: any other cannot name a row (and would fail PostgreSQL's query). */
export const possibleIds = (ids: number[]) => [...new Set(ids.filter((id) => Number.isInteger(id) && id > 0 && id <= MAX_ID))];

/**
 * Ids as sorted ranges, "3-7,9,12-40": an audit entry names a bulk action's thousands of ids (a project's are mostly
 * consecutive) in a few characters instead of one number each.
 */
export function idRanges(ids: Iterable<number>): string {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j += 1;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : String(sorted[i]));
    i = j + 1;
  }
  return parts.join(",");
}
