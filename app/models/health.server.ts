import { sql } from "kysely";
import { db } from "~/db/connection.server";

/** The database answers a query (readiness). */
export async function pingDatabase(): Promise<void> {
  await sql`select 1`.execute(db());
}
