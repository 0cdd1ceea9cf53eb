import { conn, db, dialect } from "~/db/connection.server";
import { copyRows, type CopyValue } from "~/db/pg-copy.server";
import { recordedAs } from "./actor";
import { facetKey } from "./image-facets.server";
import { newImageRow, type ImageMetadata, type StoredImageFile } from "./images.server";
import { requireEdit, type ProjectScope } from "./scope.server";
import { write } from "./write.server";

/**
 * Loading a large project at once on PostgreSQL (the bench's datasets, tests of plans at scale): images and their
 * attribute values through COPY, in one transaction, instead of the models' batched INSERTs (about ten minutes for
 * 1M images here; this, about five, most of it making the search documents). Built for a database nobody searches
 * while it loads: `image_search`'s GIN index is dropped and built afresh around the load, which locks that table.
 */
export interface LoadedImage {
  file: StoredImageFile;
  meta: ImageMetadata;
  at: number;
  values: { attributeId: number; value: string }[];
}

/** Loads `count` images, the i-th made by `row(i)`; their ids are consecutive, the first returned. */
export async function loadImagesInBulk(
  scope: ProjectScope,
  count: number,
  row: (i: number) => LoadedImage,
  progress: (done: number) => void = () => {},
): Promise<{ firstId: number }> {
  requireEdit(scope);
  if (count <= 0) return { firstId: 0 };
  const open = conn().client;
  if (dialect() !== "postgres" || !open) throw new Error("loadImagesInBulk needs PostgreSQL");
  const createdBy = recordedAs(scope.actor);
  const projectId = scope.project.id;
  const client = await open();
  let firstId = 0;
  try {
    await client.query("begin");
    // The pool's statement timeout is for page loads; a load's statements take minutes. The facet keys' fold sorts
    // every value of the load.
    await client.query("set local statement_timeout = 0");
    await client.query("set local work_mem = '256MB'");
    // The search trigger would fire once per row at the end of the COPY: the documents are made in one statement
    // after it instead, with the function the trigger calls (migration 019).
    await client.query("alter table images disable trigger images_search");
    // Ids reserved up front, so that each image's values can name it: past the highest the sequence ever gave (the
    // newest images may have been deleted; their ids are never given again), under the lock the ALTER above took.
    // (pg_get_serial_sequence answers the sequence's name quoted and schema-qualified, from the catalogue.)
    const sequence = String((await client.query("select pg_get_serial_sequence('images', 'id') as s")).rows[0].s);
    const { rows: next } = await client.query(
      `select greatest(coalesce((select max(id) from images), 0), (select case when is_called then last_value else 0 end from ${sequence})) + 1 as n`,
    );
    firstId = Number(next[0].n);
    await client.query("select setval($1::regclass, $2)", [sequence, firstId + count - 1]);
    const columns = Object.keys(newImageRow(scope.actor, projectId, row(0).file, row(0).meta, 0));
    await copyRows(
      client,
      "images",
      ["id", ...columns],
      (function* () {
        for (let i = 0; i < count; i++) {
          const { file, meta, at } = row(i);
          const image = newImageRow(scope.actor, projectId, file, meta, at) as Record<string, CopyValue>;
          yield [firstId + i, ...columns.map((c) => image[c] ?? null)];
          if ((i + 1) % 10_000 === 0) progress(i + 1);
        }
      })(),
    );
    await client.query("alter table images enable trigger images_search");
    // Built afresh, a GIN index takes its entries sorted, in one pass; inserted into, it took 1M documents' words one
    // by one (still at it after 3 minutes here). Its definition is read back from the catalogue: the migrations' own.
    const { rows: indexes } = await client.query<{ name: string; def: string }>(
      `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def
       from pg_index i where i.indrelid = 'image_search'::regclass and not i.indisprimary`,
    );
    for (const index of indexes) await client.query(`drop index ${index.name}`);
    await client.query(
      `insert into image_search (image_id, doc)
       select id, koala_image_doc(title, keywords, description, ocr_text, original_name) from images where id >= $1`,
      [firstId],
    );
    await client.query("set local maintenance_work_mem = '512MB'");
    for (const index of indexes) await client.query(index.def);
    await copyRows(
      client,
      "image_attribute_values",
      ["image_id", "attribute_id", "value", "created_by", "created_at"],
      (function* () {
        for (let i = 0; i < count; i++) {
          const { at, values } = row(i);
          for (const v of values) yield [firstId + i, v.attributeId, v.value, createdBy, at];
        }
      })(),
    );
    // The sidebar's facet keys (image-facets.server.ts), folded in one statement.
    await client.query(
      `insert into image_facets (image_id, project_id, facet_key)
       select v.image_id, $1::int, ${facetKey().compile(db()).sql}
       from image_attribute_values v where v.image_id >= $2 group by v.image_id`,
      [projectId, firstId],
    );
    await client.query("commit");
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
  await write(async (_trx, touched) => void touched.project(projectId));
  await vacuumAfterLoad();
  return { firstId };
}

/**
 * Fresh statistics, so that the next plans know the project's size, and the visibility map set, so that a count
 * reads an index only (a table just loaded has none: the planner then reads the table whole). The autovacuum would
 * get there later. Without the pool's statement timeout: the first vacuum after a load reads every page it wrote.
 */
export async function vacuumAfterLoad() {
  const client = await conn().client!();
  let failed: Error | undefined;
  try {
    await client.query("set statement_timeout = 0");
    for (const table of ["images", "image_search", "image_attribute_values", "image_facets"])
      await client.query(`vacuum (analyze) ${table}`);
    await client.query("reset statement_timeout");
  } catch (error) {
    failed = error as Error;
    throw error;
  } finally {
    // A session left without its timeout is not given back to the pool.
    client.release(failed);
  }
}
