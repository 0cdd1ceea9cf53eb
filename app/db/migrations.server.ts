import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from "kysely";
import { log } from "~/lib/log.server";
import type { Dialect } from "./connection.server";
import { initialSchema } from "./migrations/001-initial.server";
import { referenceData } from "./migrations/002-reference-data.server";
import { objectReferences } from "./migrations/003-object-references.server";
import { objectsTable } from "./migrations/004-objects.server";
import { boardsAndJobProgress } from "./migrations/005-boards-and-job-progress.server";
import { sharing } from "./migrations/008-sharing.server";
import { keywordSearch } from "./migrations/009-keyword-search.server";
import { tagVectors } from "./migrations/010-tag-vectors.server";
import { attributeExports } from "./migrations/011-attribute-exports.server";
import { accounts } from "./migrations/012-accounts.server";
import { imageFacets } from "./migrations/013-image-facets.server";
import { searchVocabulary } from "./migrations/014-search-vocabulary.server";
import { currentZoneNames } from "./migrations/015-current-zone-names.server";
import { jobKeys } from "./migrations/016-job-keys.server";
import { dropUnusedColumns } from "./migrations/017-drop-unused-columns.server";
import { jobCheckpoints } from "./migrations/018-job-checkpoints.server";
import { searchDocument } from "./migrations/019-search-document.server";
import { searchPendingList } from "./migrations/020-search-pending-list.server";
import { companySignIn } from "./migrations/021-company-sign-in.server";
import { apiTokens } from "./migrations/022-api-tokens.server";
import { jobTokens } from "./migrations/023-job-tokens.server";
import { machineOcr } from "./migrations/024-machine-ocr.server";
import { captureData } from "./migrations/025-capture-data.server";
import { nearDuplicates } from "./migrations/026-near-duplicates.server";
import { coveringQuarters } from "./migrations/027-covering-quarters.server";
import { positionsOutOfOriginals } from "./migrations/028-positions-out-of-originals.server";
import { ocrReadKey } from "./migrations/029-ocr-read-key.server";
import { duplicateGroups } from "./migrations/030-duplicate-groups.server";

/** Migrations live in code (not scanned from disk) so the bundled server carries them. */
export function migrationsFor(dialect: Dialect): Record<string, Migration> {
  return {
    "001-initial": initialSchema(dialect),
    "002-reference-data": referenceData(),
    "003-object-references": objectReferences(),
    "004-objects": objectsTable(dialect),
    "005-boards-and-job-progress": boardsAndJobProgress(),
    "008-sharing": sharing(dialect),
    "009-keyword-search": keywordSearch(dialect),
    "010-tag-vectors": tagVectors(dialect),
    "011-attribute-exports": attributeExports(dialect),
    "012-accounts": accounts(dialect),
    "013-image-facets": imageFacets(dialect),
    "014-search-vocabulary": searchVocabulary(dialect),
    "015-current-zone-names": currentZoneNames(),
    "016-job-keys": jobKeys(),
    "017-drop-unused-columns": dropUnusedColumns(),
    "018-job-checkpoints": jobCheckpoints(),
    "019-search-document": searchDocument(dialect),
    "020-search-pending-list": searchPendingList(dialect),
    "021-company-sign-in": companySignIn(dialect),
    "022-api-tokens": apiTokens(dialect),
    "023-job-tokens": jobTokens(),
    "024-machine-ocr": machineOcr(),
    "025-capture-data": captureData(),
    "026-near-duplicates": nearDuplicates(),
    "027-covering-quarters": coveringQuarters(),
    "028-positions-out-of-originals": positionsOutOfOriginals(),
    "029-ocr-read-key": ocrReadKey(),
    "030-duplicate-groups": duplicateGroups(),
  };
}

/** `schema`: the PostgreSQL schema that holds Kysely's own migration tables (when not the default). */
export async function migrateToLatest(db: Kysely<any>, dialect: Dialect, schema?: string): Promise<string[]> {
  if (dialect === "postgres")
    // One connection without PG_STATEMENT_TIMEOUT_MS: an index built over a large table may take minutes. Kysely
    // holds a session-level advisory lock on it meanwhile (so two instances starting at once migrate one after the
    // other), which is why migrations need a session of their own (behind PgBouncer: its direct port, docs/operations.md).
    return db.connection().execute(async (one) => {
      await sql`set statement_timeout = 0`.execute(one);
      try {
        return await migrate(one, dialect, schema);
      } finally {
        await sql`reset statement_timeout`.execute(one);
      }
    });
  return migrate(db, dialect, schema);
}

async function migrate(db: Kysely<any>, dialect: Dialect, schema?: string) {
  // Kysely looks for its own tables in every schema unless told which: on PostgreSQL, always the connection's own
  // (a search_path schema in a database whose other schemas hold Koala tables would otherwise be skipped).
  if (dialect === "postgres" && !schema) schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s;
  if (await servesAhead(db, dialect, schema)) return [];
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(dialect) };
  const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  // A newer version may have migrated between the check above and Kysely's lock (a rolling upgrade): look again.
  if (
    error instanceof Error &&
    /previously executed migration .* is missing/.test(error.message) &&
    (await servesAhead(db, dialect, schema))
  )
    return [];
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/**
 * A database ahead of this code: an older instance during a rolling upgrade, or a rollback. Migrations only add
 * what the release before them does not use (expand now, contract a release later: docs/deploy/README.md), so this
 * version serves on it as it is (true). A history it cannot place is refused. Kysely would refuse both
 * ("previously executed migration … is missing").
 */
async function servesAhead(db: Kysely<any>, dialect: Dialect, schema?: string): Promise<boolean> {
  const known = Object.keys(migrationsFor(dialect)).sort();
  const executed = await executedMigrations(db, schema);
  const ahead = executed.filter((name) => !known.includes(name));
  if (!ahead.length) return false;
  const newest = known.at(-1)!;
  if (ahead.every((name) => name > newest) && known.every((name) => executed.includes(name))) {
    log.warn("the database is ahead of this version: serving without migrating", { unknownMigrations: ahead });
    return true;
  }
  throw new Error(`The database has migrations this version does not know, among its own: ${ahead.join(", ")}`);
}

/** The names of the migrations the database has run (none when Kysely's table is not there yet). */
async function executedMigrations(db: Kysely<any>, schema?: string): Promise<string[]> {
  const table = schema ? sql.table(`${schema}.kysely_migration`) : sql.table("kysely_migration");
  try {
    return (await sql<{ name: string }>`select name from ${table}`.execute(db)).rows.map((r) => r.name);
  } catch {
    return [];
  }
}

export { sql };
