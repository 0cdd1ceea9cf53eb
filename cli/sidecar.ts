import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { decodeText, UNREADABLE_MESSAGE, unreadableAt } from "~/lib/text-encoding";

export interface SidecarEntry {
  title?: string;
  description?: string;
  keywords?: string[];
  ocr?: string;
}

/**
 * Reads a CSV (header row: file,title,description,keywords,ocr) or JSON ({file: {...}} or [{file, ...}]) sidecar, in
 * its own encoding (UTF-8 with or without BOM, UTF-16 with BOM, else Windows-1252: lib/text-encoding.ts). A character
 * that still cannot be read stops the import before anything is stored, naming its line.
 */
export async function readSidecar(file: string): Promise<Map<string, SidecarEntry>> {
  const { text } = decodeText(await readFile(file));
  const bad = unreadableAt(text);
  if (bad !== null) throw new Error(`${path.basename(file)}, line ${bad}: ${UNREADABLE_MESSAGE}`);
  const rows: Record<string, unknown>[] = file.toLowerCase().endsWith(".json")
    ? toRows(JSON.parse(text))
    : parse(text, { columns: true, skip_empty_lines: true, trim: true });
  const map = new Map<string, SidecarEntry>();
  for (const row of rows) {
    const name = String(row.file ?? "").trim();
    if (!name) continue;
    const keywords = Array.isArray(row.keywords) ? row.keywords.map(String) : String(row.keywords ?? "").split(",");
    map.set(name, {
      title: row.title ? String(row.title) : undefined,
      description: row.description ? String(row.description) : undefined,
      keywords: keywords.map((k) => k.trim()).filter(Boolean),
      ocr: row.ocr ? String(row.ocr) : undefined,
    });
  }
  return map;
}

function toRows(json: unknown): Record<string, unknown>[] {
  if (Array.isArray(json)) return json as Record<string, unknown>[];
  if (json && typeof json === "object")
    return Object.entries(json as Record<string, Record<string, unknown>>).map(([file, v]) => ({ file, ...v }));
  throw new Error("The JSON sidecar must be an array or an object keyed by file name");
}
