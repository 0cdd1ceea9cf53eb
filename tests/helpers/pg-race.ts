/**
 * Kysely's migrator lists the tables of every schema in the database (its PostgreSQL introspection calls
 * has_schema_privilege() and pg_get_serial_sequence() by schema name), and those calls fail with
 * 'schema "…" does not exist' when another process drops a schema in the middle of the query. Test runs share
 * one PostgreSQL database and create and drop schemas all the time (every integration test file, every run on
 * the machine), so a migration — in a test, or in a test server's boot — is retried when exactly that happens.
 */
export const VANISHED_SCHEMA = /schema "[^"]+" does not exist/;

export async function retryOnVanishedSchema<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !(error instanceof Error) || !VANISHED_SCHEMA.test(error.message)) throw error;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}
