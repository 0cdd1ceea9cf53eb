import { sql, type Kysely, type Migration } from "kysely";

/**
 * Possible duplicates as groups one level deep (models/duplicates.server.ts): each copy names the first image of its
 * group. Before, an upload named its closest look-alike, itself perhaps a copy (a chain), and a deleted look-alike
 * left its copies naming nothing. Here chains are folded onto their first image, copies of a deleted image regrouped
 * under the oldest of them, and an index added for a group's copies (the page lists each group's newest).
 */
export function duplicateGroups(): Migration {
  return {
    async up(db: Kysely<any>) {
      // Copies of copies: each step folds one level; chains are short (each upload names one earlier image).
      for (;;) {
        const folded = await db
          .updateTable("images as c")
          .set({ dup_of: sql`(select p.dup_of from images p where p.id = c.dup_of)` })
          .where("c.dup_of", "is not", null)
          .where(sql<boolean>`exists (select 1 from images p where p.id = c.dup_of and p.dup_of is not null)`)
          .executeTakeFirst();
        if (!Number(folded.numUpdatedRows)) break;
      }
      // Copies of a deleted image: the oldest is the group's first, the others its copies.
      const orphans = (await db
        .selectFrom("images as c")
        .select(["c.dup_of as gone", sql<number>`min(c.id)`.as("head")])
        .where("c.dup_of", "is not", null)
        .where(sql<boolean>`not exists (select 1 from images p where p.id = c.dup_of)`)
        .groupBy("c.dup_of")
        .execute()) as { gone: number; head: number }[];
      for (const { gone, head } of orphans) {
        await db.updateTable("images").set({ dup_of: null }).where("id", "=", Number(head)).execute();
        await db
          .updateTable("images")
          .set({ dup_of: Number(head) })
          .where("dup_of", "=", Number(gone))
          .execute();
      }
      await db.schema
        .createIndex("images_dup_groups")
        .on("images")
        .columns(["dup_of", "id"])
        .where(sql.ref("dup_of"), "is not", null)
        .execute();
    },
  };
}
