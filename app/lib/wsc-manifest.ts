import { parse } from "csv-parse/sync";
import { attributeNameProblem, attributeValueProblem, normalAttributeName } from "./attribute-rules";
import { keywordProblem, LIMITS, splitKeywords } from "./schemas";
import { decodeText, UNREADABLE_MESSAGE, unreadableAt } from "./text-encoding";

/**
 * A WSC project's manifest: the list of images its web source offers, as JSON or CSV.
 *
 * JSON: an array, or `{ "images": [...] }`, of `{ url, title?, description?, keywords?, attributes? }` where keywords
 * is a list or a comma-separated string and attributes maps a name to a value.
 * CSV: a header row naming `url` (any case) and optionally `title`, `description`, `keywords` (comma-separated in
 * the cell); every other column is an attribute, one value per cell (empty cells set nothing).
 *
 * Every entry goes through the rules of the forms (title and description lengths, keyword and attribute rules):
 * an entry that breaks one is refused with the reason, the others still come in.
 */
export interface ManifestEntry {
  /** Where the entry was: the CSV line, or the JSON item's position (1-based). */
  line: number;
  url: string;
  title: string;
  description: string;
  keywords: string[];
  /** Attribute name (as stored: spaces as underscores) → value. */
  attributes: Record<string, string>;
}

interface ManifestProblem {
  line: number;
  message: string;
}

const MANIFEST_MAX_ENTRIES = 10_000;
/** Columns of a CSV manifest, and attribute names in a whole manifest, at most (each name becomes an attribute). */
const MANIFEST_MAX_ATTRIBUTES = 64;
const tooMany = (n: number) =>
  new ManifestUnreadable(
    `The manifest lists ${n.toLocaleString("en")} images or more; at most ${MANIFEST_MAX_ENTRIES.toLocaleString("en")} are read.`,
  );

export class ManifestUnreadable extends Error {}

type RawEntry = {
  line: number;
  url: unknown;
  title?: unknown;
  description?: unknown;
  keywords?: unknown;
  attributes: Record<string, unknown>;
};

export function parseManifest(body: Buffer, contentType: string | null): { entries: ManifestEntry[]; problems: ManifestProblem[] } {
  // In its own encoding (a CSV saved by a spreadsheet may be Windows-1252), never with a silent U+FFFD.
  const { text } = decodeText(body);
  const bad = unreadableAt(text);
  if (bad !== null) throw new ManifestUnreadable(`Line ${bad} of the manifest: ${UNREADABLE_MESSAGE}.`);
  const looksJson = /json/i.test(contentType ?? "") || /^\s*[[{]/.test(text);
  const raw = looksJson ? jsonEntries(text) : csvEntries(text);
  const names = new Set(raw.flatMap((r) => Object.keys(r.attributes).map((k) => normalAttributeName(k).toLowerCase())));
  if (names.size > MANIFEST_MAX_ATTRIBUTES)
    throw new ManifestUnreadable(
      `The manifest uses ${names.size.toLocaleString("en")} attribute names; at most ${MANIFEST_MAX_ATTRIBUTES} are read.`,
    );
  const entries: ManifestEntry[] = [];
  const problems: ManifestProblem[] = [];
  for (const item of raw) {
    const checked = checkEntry(item);
    if (typeof checked === "string") problems.push({ line: item.line, message: checked });
    else entries.push(checked);
  }
  return { entries, problems };
}

function jsonEntries(text: string): RawEntry[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ManifestUnreadable("The manifest is not valid JSON.");
  }
  const list = Array.isArray(doc) ? doc : isObject(doc) && Array.isArray(doc.images) ? doc.images : null;
  if (!list) throw new ManifestUnreadable('The manifest holds no list of images (an array, or an object with "images").');
  if (list.length > MANIFEST_MAX_ENTRIES) throw tooMany(list.length);
  return list.map((item: unknown, i: number) => {
    const o = isObject(item) ? item : {};
    return {
      line: i + 1,
      url: o.url,
      title: o.title,
      description: o.description,
      keywords: o.keywords,
      attributes: isObject(o.attributes) ? o.attributes : {},
    };
  });
}

const KNOWN = new Set(["url", "title", "description", "keywords"]);

function csvEntries(text: string): RawEntry[] {
  let rows: string[][];
  try {
    // Read no further than one row past the limit (so "too many" is known): a hostile file cannot make the parse large.
    rows = parse(text, { skip_empty_lines: true, relax_column_count: true, trim: true, to_line: MANIFEST_MAX_ENTRIES + 2 }) as string[][];
  } catch {
    throw new ManifestUnreadable("The manifest could not be read as CSV.");
  }
  const [header, ...data] = rows;
  const names = (header ?? []).map((h) => h.trim());
  if (names.length > KNOWN.size + MANIFEST_MAX_ATTRIBUTES)
    throw new ManifestUnreadable(
      `The manifest has ${names.length.toLocaleString("en")} columns; at most ${KNOWN.size + MANIFEST_MAX_ATTRIBUTES} are read.`,
    );
  if (data.length > MANIFEST_MAX_ENTRIES) throw tooMany(data.length);
  const column = (name: string) => names.findIndex((h) => h.toLowerCase() === name);
  const at = { url: column("url"), title: column("title"), description: column("description"), keywords: column("keywords") };
  if (at.url < 0) throw new ManifestUnreadable("The manifest's first row names no url column.");
  // Column positions worked out once, not per row.
  const attributeColumns = names.flatMap((name, c) => (KNOWN.has(name.toLowerCase()) ? [] : [[name, c] as const]));
  return data.map((row, i) => {
    const attributes: Record<string, unknown> = {};
    for (const [name, c] of attributeColumns) if (row[c]) attributes[name] = row[c];
    return {
      line: i + 2,
      url: row[at.url],
      title: row[at.title],
      description: row[at.description],
      keywords: row[at.keywords],
      attributes,
    };
  });
}

function checkEntry(item: RawEntry): ManifestEntry | string {
  const url = typeof item.url === "string" ? item.url.trim() : "";
  if (!url) return "No image URL.";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "The image URL is not a valid address.";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "Only http and https addresses are allowed.";
  const title = textOf(item.title);
  const description = textOf(item.description);
  if (title.length > LIMITS.title) return `The title is longer than ${LIMITS.title} characters.`;
  if (description.length > LIMITS.description) return `The description is longer than ${LIMITS.description} characters.`;
  const keywords = Array.isArray(item.keywords) ? splitKeywords(item.keywords.map(textOf).join(",")) : splitKeywords(textOf(item.keywords));
  const keywordError = keywordProblem(keywords);
  if (keywordError) return keywordError;
  const attributes: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [rawName, rawValue] of Object.entries(item.attributes)) {
    const name = normalAttributeName(rawName);
    const nameError = attributeNameProblem(name);
    if (nameError) return `Attribute "${rawName.slice(0, 40)}": ${nameError}`;
    // Names are one attribute in any case: "Colour" and "colour" in one entry would be two values for one.
    if (seen.has(name.toLowerCase())) return `Attribute "${name}" is given twice.`;
    seen.add(name.toLowerCase());
    const value = textOf(rawValue);
    if (!value) continue;
    const valueError = attributeValueProblem(value);
    if (valueError) return `Attribute "${name}": ${valueError}`;
    attributes[name] = value;
  }
  return { line: item.line, url: parsed.href, title, description, keywords, attributes };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const textOf = (v: unknown) => (typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : "");

/** An address as a report shows it: no credentials, no query (tokens live there), at most 120 characters. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    const shown = `${u.protocol}//${u.host}${u.pathname}`;
    return shown.length > 120 ? `${shown.slice(0, 117)}…` : shown;
  } catch {
    return url.slice(0, 120);
  }
}
