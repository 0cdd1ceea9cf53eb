import { sql, type CreateTableBuilder, type Kysely, type Migration } from "kysely";
import type { Dialect } from "../connection.server";

/** The whole schema of both spec documents, so later features do not churn it. */
export function initialSchema(dialect: Dialect): Migration {
  const pg = dialect === "postgres";
  const time = pg ? "bigint" : "integer";
  const withId = <T extends string>(t: CreateTableBuilder<T, never>) =>
    pg
      ? t.addColumn("id", "integer", (c) => c.primaryKey().generatedByDefaultAsIdentity())
      : t.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement());

  return {
    async up(db: Kysely<any>) {
      await withId(db.schema.createTable("users"))
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("surname", "text", (c) => c.notNull())
        .addColumn("mobile", "text")
        .addColumn("country_code", "text")
        .addColumn("timezone_id", "integer")
        .addColumn("language_code", "text")
        .addColumn("org_unit_id", "integer")
        .addColumn("role", "text", (c) =>
          c
            .notNull()
            .defaultTo("user")
            .check(sql`role in ('user','admin')`),
        )
        .addColumn("status", "text", (c) =>
          c
            .notNull()
            .defaultTo("pending")
            .check(sql`status in ('pending','active','disabled')`),
        )
        .addColumn("password_hash", "text")
        .addColumn("totp_secret", "text")
        .addColumn("totp_last_step", time)
        .addColumn("terms_acknowledged_at", time)
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("updated_at", time, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("sessions")
        .addColumn("id_hash", "text", (c) => c.primaryKey())
        .addColumn("user_id", "integer", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("last_seen_at", time, (c) => c.notNull())
        .addColumn("expires_at", time, (c) => c.notNull())
        .addColumn("revoked_at", time)
        .addColumn("ip", "text")
        .addColumn("user_agent", "text")
        .execute();
      await db.schema.createIndex("sessions_user").on("sessions").column("user_id").execute();

      await withId(db.schema.createTable("sign_in_tokens"))
        .addColumn("user_id", "integer", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("purpose", "text", (c) => c.notNull())
        .addColumn("token_hash", "text", (c) => c.notNull().unique())
        .addColumn("redirect_to", "text")
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("expires_at", time, (c) => c.notNull())
        .addColumn("used_at", time)
        .execute();
      await db.schema.createIndex("sign_in_tokens_user").on("sign_in_tokens").columns(["user_id", "purpose"]).execute();

      await db.schema
        .createTable("rate_limits")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("window_start", time, (c) => c.notNull())
        .addColumn("count", "integer", (c) => c.notNull())
        .execute();

      await withId(db.schema.createTable("projects"))
        .addColumn("name", "text", (c) => c.notNull().unique())
        .addColumn("logo_key", "text")
        .addColumn("wsc", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("wsc_source", "text")
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("updated_at", time, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("project_members")
        .addColumn("project_id", "integer", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("user_id", "integer", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("role", "text", (c) =>
          c
            .notNull()
            .defaultTo("editor")
            .check(sql`role in ('viewer','editor','manager')`),
        )
        .addColumn("created_at", time, (c) => c.notNull())
        .addPrimaryKeyConstraint("project_members_pk", ["project_id", "user_id"])
        .execute();
      await db.schema.createIndex("project_members_user").on("project_members").column("user_id").execute();

      await withId(db.schema.createTable("images"))
        .addColumn("project_id", "integer", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("title", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("keywords", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("ocr_text", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("original_name", "text", (c) => c.notNull())
        .addColumn("mime_type", "text", (c) => c.notNull())
        .addColumn("storage_key", "text", (c) => c.notNull())
        .addColumn("thumb_key", "text", (c) => c.notNull())
        .addColumn("preview_key", "text", (c) => c.notNull())
        .addColumn("size_bytes", time, (c) => c.notNull())
        .addColumn("width", "integer", (c) => c.notNull())
        .addColumn("height", "integer", (c) => c.notNull())
        .addColumn("checksum", "text", (c) => c.notNull())
        .addColumn("rotation", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("version", "integer", (c) => c.notNull().defaultTo(1))
        .addColumn("created_by", "integer", (c) => c.references("users.id").onDelete("set null"))
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("updated_at", time, (c) => c.notNull())
        .addColumn("deleted_at", time)
        .execute();
      // The grid's keyset order (newest first, id as tiebreak) over live images only: partial, so
      // paging, counting and jump cursors read this index alone and never touch deleted rows.
      await db.schema
        .createIndex("images_project_keyset")
        .on("images")
        .columns(["project_id", "created_at desc", "id desc"])
        .where(sql.ref("deleted_at"), "is", null)
        .execute();

      await withId(db.schema.createTable("image_versions"))
        .addColumn("image_id", "integer", (c) => c.notNull().references("images.id").onDelete("cascade"))
        .addColumn("version", "integer", (c) => c.notNull())
        .addColumn("title", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("keywords", "text", (c) => c.notNull())
        .addColumn("ocr_text", "text", (c) => c.notNull())
        .addColumn("rotation", "integer", (c) => c.notNull())
        .addColumn("storage_key", "text", (c) => c.notNull())
        .addColumn("thumb_key", "text", (c) => c.notNull())
        .addColumn("preview_key", "text", (c) => c.notNull())
        .addColumn("changes", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("changed_by", "integer", (c) => c.references("users.id").onDelete("set null"))
        .addColumn("changed_at", time, (c) => c.notNull())
        .addUniqueConstraint("image_versions_unique", ["image_id", "version"])
        .execute();

      await db.schema
        .createTable("pending_uploads")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("user_id", "integer", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("project_id", "integer", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("file_name", "text", (c) => c.notNull())
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("expires_at", time, (c) => c.notNull())
        .addColumn("image_id", "integer", (c) => c.references("images.id").onDelete("set null"))
        .execute();
      await db.schema.createIndex("pending_uploads_expiry").on("pending_uploads").column("expires_at").execute();

      await db.schema
        .createTable("boards")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("project_id", "integer", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("title", "text", (c) => c.notNull())
        .addColumn("cover_image_id", "integer", (c) => c.references("images.id").onDelete("set null"))
        .addColumn("is_client_board", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("active", "integer", (c) => c.notNull().defaultTo(1))
        .addColumn("created_by", "integer", (c) => c.references("users.id").onDelete("set null"))
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("updated_at", time, (c) => c.notNull())
        .addUniqueConstraint("boards_project_title", ["project_id", "title"])
        .execute();
      await db.schema.createIndex("boards_updated").on("boards").columns(["updated_at desc", "id"]).execute();

      await db.schema
        .createTable("board_images")
        .addColumn("board_id", "text", (c) => c.notNull().references("boards.id").onDelete("cascade"))
        .addColumn("image_id", "integer", (c) => c.notNull().references("images.id").onDelete("cascade"))
        .addColumn("added_by", "integer", (c) => c.references("users.id").onDelete("set null"))
        .addColumn("added_at", time, (c) => c.notNull())
        .addPrimaryKeyConstraint("board_images_pk", ["board_id", "image_id"])
        .execute();
      await db.schema
        .createIndex("board_images_keyset")
        .on("board_images")
        .columns(["board_id", "added_at desc", "image_id desc"])
        .execute();
      await db.schema.createIndex("board_images_image").on("board_images").column("image_id").execute();

      await withId(db.schema.createTable("attributes"))
        .addColumn("project_id", "integer", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("code", "text", (c) => c.notNull())
        .addColumn("active", "integer", (c) => c.notNull().defaultTo(1))
        .addColumn("type", "integer", (c) => c.notNull().check(sql`type in (1,2,3)`))
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("updated_at", time, (c) => c.notNull())
        .addUniqueConstraint("attributes_project_name", ["project_id", "name"])
        .execute();

      await db.schema
        .createTable("image_attribute_values")
        .addColumn("image_id", "integer", (c) => c.notNull().references("images.id").onDelete("cascade"))
        .addColumn("attribute_id", "integer", (c) => c.notNull().references("attributes.id").onDelete("cascade"))
        .addColumn("value", "text", (c) => c.notNull())
        .addColumn("created_by", "integer", (c) => c.references("users.id").onDelete("set null"))
        .addColumn("created_at", time, (c) => c.notNull())
        .addPrimaryKeyConstraint("image_attribute_values_pk", ["image_id", "attribute_id"])
        .execute();
      await db.schema
        .createIndex("image_attribute_values_filter")
        .on("image_attribute_values")
        .columns(["attribute_id", "value", "image_id"])
        .execute();

      await withId(db.schema.createTable("share_links"))
        .addColumn("board_id", "text", (c) => c.notNull().references("boards.id").onDelete("cascade"))
        .addColumn("token_hash", "text", (c) => c.notNull().unique())
        .addColumn("created_by", "integer", (c) => c.references("users.id").onDelete("set null"))
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("expires_at", time)
        .addColumn("revoked_at", time)
        .execute();

      await withId(db.schema.createTable("registrations"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("surname", "text", (c) => c.notNull())
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("country_code", "text", (c) => c.notNull())
        .addColumn("mobile", "text", (c) => c.notNull())
        .addColumn("country", "text", (c) => c.notNull())
        .addColumn("timezone", "text", (c) => c.notNull())
        .addColumn("utc_offset", "real")
        .addColumn("org_unit", "text", (c) => c.notNull())
        .addColumn("language", "text", (c) => c.notNull())
        .addColumn("iso_code", "text", (c) => c.notNull())
        .addColumn("client", "text", (c) => c.notNull())
        .addColumn("sim_use", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull().defaultTo("submitted"))
        .addColumn("created_at", time, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("countries")
        .addColumn("code", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("dial_code", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("languages")
        .addColumn("iso_code", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull().defaultTo("active"))
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("updated_at", time, (c) => c.notNull())
        .execute();
      await withId(db.schema.createTable("timezones"))
        .addColumn("name", "text", (c) => c.notNull().unique())
        .addColumn("offset_hours", "real", (c) => c.notNull())
        .execute();
      await withId(db.schema.createTable("org_units"))
        .addColumn("name", "text", (c) => c.notNull().unique())
        .execute();

      await withId(db.schema.createTable("daily_media"))
        .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('image','video')`))
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("position", "integer", (c) => c.notNull())
        .execute();

      await withId(db.schema.createTable("audit_log"))
        .addColumn("at", time, (c) => c.notNull())
        .addColumn("actor_user_id", "integer", (c) => c.references("users.id").onDelete("set null"))
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("subject", "text")
        .addColumn("ip", "text")
        .addColumn("detail", "text", (c) => c.notNull().defaultTo("{}"))
        .execute();
      await db.schema.createIndex("audit_log_at").on("audit_log").column("at").execute();

      await withId(db.schema.createTable("jobs"))
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull().defaultTo("queued"))
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("max_attempts", "integer", (c) => c.notNull().defaultTo(5))
        .addColumn("run_at", time, (c) => c.notNull())
        .addColumn("locked_at", time)
        .addColumn("locked_by", "text")
        .addColumn("last_error", "text")
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("updated_at", time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex("jobs_ready").on("jobs").columns(["status", "run_at"]).execute();

      await createFullText(db, pg);
    },
    async down() {
      throw new Error("The initial migration is not reversible; restore a backup instead.");
    },
  };
}

/** Full-text index over title, description, keywords and OCR, kept in step with every write. */
async function createFullText(db: Kysely<any>, pg: boolean) {
  if (pg) {
    await sql`alter table images add column search tsvector generated always as (
      setweight(to_tsvector('simple', coalesce(title, '')), 'A') ||
      setweight(to_tsvector('simple', coalesce(keywords, '')), 'A') ||
      setweight(to_tsvector('simple', coalesce(description, '')), 'B') ||
      setweight(to_tsvector('simple', coalesce(ocr_text, '')), 'C')
    ) stored`.execute(db);
    await sql`create index images_search on images using gin (search)`.execute(db);
    return;
  }
  await sql`create virtual table images_fts using fts5(
    title, description, keywords, ocr_text,
    content='images', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
  )`.execute(db);
  await sql`create trigger images_fts_insert after insert on images begin
    insert into images_fts(rowid, title, description, keywords, ocr_text)
    values (new.id, new.title, new.description, new.keywords, new.ocr_text);
  end`.execute(db);
  await sql`create trigger images_fts_delete after delete on images begin
    insert into images_fts(images_fts, rowid, title, description, keywords, ocr_text)
    values ('delete', old.id, old.title, old.description, old.keywords, old.ocr_text);
  end`.execute(db);
  await sql`create trigger images_fts_update after update of title, description, keywords, ocr_text on images begin
    insert into images_fts(images_fts, rowid, title, description, keywords, ocr_text)
    values ('delete', old.id, old.title, old.description, old.keywords, old.ocr_text);
    insert into images_fts(rowid, title, description, keywords, ocr_text)
    values (new.id, new.title, new.description, new.keywords, new.ocr_text);
  end`.execute(db);
}
