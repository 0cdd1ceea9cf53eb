import { sql, type Kysely, type Migration } from "kysely";

/**
 * Possible duplicates as groups one level deep (models/duplicates.server.ts): each copy names the first image of its
 * group. Before, an upload named its closest look-alike, itself perhaps a copy (a chain), and a deleted look-alike
 * left its copies naming nothing. Here an index for a group's copies is added (the page lists each group's newest;
 * it serves the steps below too), chains are folded onto their first image, and copies of a deleted image regrouped
 * under the oldest of them. Only images that are possible copies are read (partial indexes), whatever the table's size.
 */
export function duplicateGroups(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createIndex("images_dup_groups")
        .on("images")
        .columns(["project_id", "dup_of", "id"])
        .where(sql.ref("dup_of"), "is not", null)
        .execute();
      // Copies of copies: each pass folds at least one level (every write named an older image, so chains are short
      // and end; a cycle left by a hand edit is not followed past 64 passes).
      for (let pass = 0; pass < 64; pass++) {
        const folded = await db
          .updateTable("images as c")
          .set({ dup_of: sql`(select p.dup_of from images p where p.id = c.dup_of)` })
          .where("c.dup_of", "is not", null)
          .where(sql<boolean>`exists (select 1 from images p where p.id = c.dup_of and p.dup_of is not null and p.dup_of <> c.id)`)
          .executeTakeFirst();
        if (!Number(folded.numUpdatedRows)) break;
      }
      // Copies of a deleted image: the oldest is the group's first, the others its copies (as regroupCopiesOf does).
      const gone = (
        await db
          .selectFrom("images as c")
          .select("c.dup_of")
          .distinct()
          .where("c.dup_of", "is not", null)
          .where(sql<boolean>`not exists (select 1 from images p where p.id = c.dup_of)`)
          .execute()
      ).map((r) => Number(r.dup_of));
      for (let i = 0; i < gone.length; i += 1000) {
        const ids = gone.slice(i, i + 1000);
        const heads = (
          await db
            .selectFrom("images")
            .select(sql<number>`min(id)`.as("head"))
            .where("dup_of", "in", ids)
            .groupBy("dup_of")
            .execute()
        ).map((r) => Number(r.head));
        await db
          .updateTable("images")
          .set({ dup_of: sql`(select min(x.id) from images x where x.project_id = images.project_id and x.dup_of = images.dup_of)` })
          .where("dup_of", "in", ids)
          .where("id", "not in", heads)
          .execute();
        await db.updateTable("images").set({ dup_of: null }).where("id", "in", heads).execute();
      }
    },
  };
}
