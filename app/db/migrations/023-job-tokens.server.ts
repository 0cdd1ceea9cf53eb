import type { Kysely, Migration } from "kysely";

/**
 * The access token a job was started with (`/api/v1`): the API shows a job only to the token that started it, and
 * the job runs narrowed by that token's grant as it is when it runs (revoked: nothing happens).
 */
export function jobTokens(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable("jobs").addColumn("api_token_id", "integer").execute();
    },
  };
}
