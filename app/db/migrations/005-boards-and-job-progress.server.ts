import { sql, type Kysely, type Migration } from "kysely";

/**
 * Board names are unique in a project whatever their case (the spec: "not already in use"; compared
 * case-insensitively, trimmed: titles are stored trimmed). Jobs carry progress, their outcome and who started
 * them, so a long bulk action can show its progress to the person who asked for it.
 */
export function boardsAndJobProgress(): Migration {
  return {
    async up(db: Kysely<any>) {
      await sql`create unique index boards_project_title_ci on boards (project_id, lower(title))`.execute(db);
      await db.schema
        .alterTable("jobs")
        .addColumn("progress", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable("jobs").addColumn("total", "integer").execute();
      await db.schema.alterTable("jobs").addColumn("result", "text").execute();
      await db.schema
        .alterTable("jobs")
        .addColumn("owner_user_id", "integer", (c) => c.references("users.id").onDelete("set null"))
        .execute();
      await db.schema.createIndex("jobs_owner").on("jobs").column("owner_user_id").execute();
      // Bulk actions walk a project's selection in id order, in chunks.
      await db.schema
        .createIndex("images_project_id")
        .on("images")
        .columns(["project_id", "id"])
        .where(sql.ref("deleted_at"), "is", null)
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropIndex("images_project_id").execute();
      await db.schema.dropIndex("jobs_owner").execute();
      for (const column of ["owner_user_id", "result", "total", "progress"])
        await db.schema.alterTable("jobs").dropColumn(column).execute();
      await sql`drop index boards_project_title_ci`.execute(db);
    },
  };
}
