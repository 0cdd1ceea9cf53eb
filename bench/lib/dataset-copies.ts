import SQLite from "better-sqlite3";
import path from "node:path";
import type { Kysely } from "kysely";
import type { DatabaseConfig } from "~/config.server";
import { connect } from "~/db/connection.server";
import type { Database } from "~/db/schema";
import { copyPgDatabase } from "./datasets";
import { freshCopy } from "./sqlite-copy";

/**
 * Where each side of each round of a writing metric works: a fresh copy of a template (the dataset, prepared by the
 * worker through the app: a board, attributes) as a file (SQLite) or a database made from it (PostgreSQL: CREATE
 * DATABASE … TEMPLATE). `drop` removes every copy and the template; call it whatever happens (on PostgreSQL each is a
 * database the size of the dataset's).
 */
export interface DatasetCopies {
  template: DatabaseConfig;
  fresh(name: string): Promise<DatabaseConfig>;
  drop(): Promise<void>;
}

export async function datasetCopies(source: DatabaseConfig, workDir: string, name: string): Promise<DatasetCopies> {
  if (source.dialect === "sqlite") {
    const file = path.join(workDir, `${name}.sqlite`);
    // A consistent copy of the dataset (WAL included).
    const original = new SQLite(source.file, { readonly: true });
    await original.backup(file);
    original.close();
    return {
      template: { ...source, file },
      fresh: async (copy) => ({ ...source, file: freshCopy(file, workDir, copy) }),
      drop: async () => {},
    };
  }
  const template = await copyPgDatabase(source.url, name);
  const copies = new Map<string, Awaited<ReturnType<typeof copyPgDatabase>>>();
  return {
    template: { ...source, url: template.url },
    async fresh(copy) {
      const made = await copyPgDatabase(template.url, copy);
      copies.set(copy, made);
      return { ...source, url: made.url };
    },
    async drop() {
      for (const copy of copies.values()) await copy.drop();
      await template.drop();
    },
  };
}

/** Asks a copy one thing through a connection of its own (how many rows a side wrote), and closes it. */
export async function readCopy<T>(at: DatabaseConfig, read: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const connection = connect(at);
  try {
    return await read(connection.db);
  } finally {
    await connection.close();
  }
}
