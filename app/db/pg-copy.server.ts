import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";

/**
 * PostgreSQL's `COPY … FROM STDIN` (text format) for loads of many rows: one statement streams them all, without
 * a parameter per value or a plan per batch. 1M image rows load in seconds where batched INSERTs take minutes.
 */

export type CopyValue = string | number | null;

/** A value in COPY's text format: `\N` for null; backslash, tab, newline and carriage return escaped. */
export function copyText(value: CopyValue): string {
  if (value === null) return "\\N";
  if (typeof value === "number") return String(value);
  return value.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"));
}

/**
 * Streams `rows` into `table` (its `columns`, in order) on `client`, in the client's current transaction if any.
 * Lines are sent in chunks of about 64 KiB; the source is read only as fast as the server takes them.
 */
export async function copyRows(
  client: pg.ClientBase,
  table: string,
  columns: string[],
  rows: Iterable<CopyValue[]> | AsyncIterable<CopyValue[]>,
): Promise<void> {
  const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const target = client.query(copyFrom(`copy ${ident(table)} (${columns.map(ident).join(", ")}) from stdin`));
  async function* lines() {
    let chunk = "";
    for await (const row of rows) {
      chunk += `${row.map(copyText).join("\t")}\n`;
      if (chunk.length >= 65_536) {
        yield chunk;
        chunk = "";
      }
    }
    if (chunk) yield chunk;
  }
  await pipeline(Readable.from(lines()), target);
}
