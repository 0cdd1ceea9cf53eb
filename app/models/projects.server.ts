import { sql } from "kysely";
import { db } from "~/db/connection.server";
import type { Project } from "~/db/schema";
import { ConflictError, NotFoundError } from "~/lib/errors";
import { requireAdmin, type Actor } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { queuePositionRemoval } from "./image-positions.server";
import { requireManage, visibleProjectIds, type ProjectScope } from "./scope.server";
import { isUniqueViolation, write } from "./write.server";

export type ProjectSummary = Pick<Project, "id" | "name" | "logo_key" | "wsc" | "updated_at">;

export async function listProjects(actor: Actor): Promise<ProjectSummary[]> {
  return db()
    .selectFrom("projects")
    .select(["id", "name", "logo_key", "wsc", "updated_at"])
    .where("id", "in", visibleProjectIds(actor))
    .orderBy("name")
    .orderBy("id")
    .execute();
}

/** Administrative: creates a project (CLI, demo). */
export async function createProject(input: { name: string; wsc?: boolean; wscSource?: string | null }): Promise<Project> {
  const now = Date.now();
  return db()
    .insertInto("projects")
    .values({
      name: input.name.trim(),
      wsc: input.wsc ? 1 : 0,
      wsc_source: input.wscSource ?? null,
      logo_key: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findProjectByName(name: string): Promise<Project | undefined> {
  return db().selectFrom("projects").selectAll().where("name", "=", name.trim()).executeTakeFirst();
}

/** Administrative: adds (or changes the role of) a member. */
export async function addMember(projectId: number, userId: number, role: "viewer" | "editor" | "manager" = "editor") {
  await db()
    .insertInto("project_members")
    .values({ project_id: projectId, user_id: userId, role, created_at: Date.now() })
    .onConflict((oc) => oc.columns(["project_id", "user_id"]).doUpdateSet({ role }))
    .execute();
}

/**
 * Saves the project edit dialog (managers): the name (the same rules as a board name, unique among all projects)
 * and, when given, the WSC flag with its source (the manifest a re-import reads; kept when the flag is cleared).
 */
/**
 * A project's settings (managers): its name and, from the edit form, the WSC flag and source and whether its images
 * keep their GPS positions (`keepGps` undefined: left as it is). Turning positions off forgets every one the project's
 * images hold, in the same write, and queues their removal from the originals' files.
 */
export async function editProject(scope: ProjectScope, name: string, settings?: { wsc: boolean; source: string; keepGps?: boolean }) {
  requireManage(scope);
  const trimmed = name.trim();
  try {
    await write(async (trx, touched) => {
      const taken = await trx
        .selectFrom("projects")
        .select("id")
        .where(sql<boolean>`lower(name) = ${trimmed.toLowerCase()}`)
        .where("id", "!=", scope.project.id)
        .executeTakeFirst();
      if (taken) throw new ConflictError("Project name already exists. Please choose another name");
      // Whether positions were kept until now: only a change from on to off has files to clean.
      const before =
        settings?.keepGps === false
          ? await trx.selectFrom("projects").select("keep_gps").where("id", "=", scope.project.id).executeTakeFirst()
          : undefined;
      await trx
        .updateTable("projects")
        .set(
          settings
            ? {
                name: trimmed,
                wsc: settings.wsc ? 1 : 0,
                wsc_source: settings.source || null,
                ...(settings.keepGps === undefined ? {} : { keep_gps: settings.keepGps ? 1 : 0 }),
              }
            : { name: trimmed },
        )
        .where("id", "=", scope.project.id)
        .execute();
      // Under the project row's lock (taken by the update above): an upload reading the setting waits (insertImage).
      if (settings?.keepGps === false) {
        await trx
          .updateTable("images")
          .set({ gps_lat: null, gps_lon: null })
          .where("project_id", "=", scope.project.id)
          .where("gps_lat", "is not", null)
          .execute();
        // The originals' own positions go in the background, from this commit on.
        if (before?.keep_gps === 1) await queuePositionRemoval(scope.project.id, trx);
      }
      touched.project(scope.project.id);
      await recordAudit(
        {
          action: "project.edited",
          ...byActor(scope.actor),
          subject: `project:${scope.project.id}`,
          detail: {
            name: trimmed,
            ...(settings ? { wsc: settings.wsc, source: settings.source || null, keepGps: settings.keepGps } : {}),
          },
        },
        trx,
      );
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError("Project name already exists. Please choose another name");
    throw err;
  }
}

/** The admin console's projects: every project with its number of members. */
export async function allProjects(actor: Actor) {
  requireAdmin(actor);
  return db()
    .selectFrom("projects as p")
    .leftJoin("project_members as m", "m.project_id", "p.id")
    .select(["p.id", "p.name", "p.logo_key", "p.wsc", (eb) => eb.fn.count<number>("m.user_id").as("members")])
    .groupBy(["p.id", "p.name", "p.logo_key", "p.wsc"])
    .orderBy("p.name")
    .execute();
}

/** Creates a project from the admin console (a name as a project edit takes it, unique in any case). */
export async function adminCreateProject(actor: Actor, name: string): Promise<number> {
  requireAdmin(actor);
  const trimmed = name.trim();
  try {
    return await write(async (trx) => {
      const taken = await trx
        .selectFrom("projects")
        .select("id")
        .where(sql<boolean>`lower(name) = ${trimmed.toLowerCase()}`)
        .executeTakeFirst();
      if (taken) throw new ConflictError("Project name already exists. Please choose another name");
      const now = Date.now();
      const row = await trx
        .insertInto("projects")
        .values({ name: trimmed, wsc: 0, wsc_source: null, logo_key: null, created_at: now, updated_at: now })
        .returning("id")
        .executeTakeFirstOrThrow();
      await recordAudit({ action: "project.created", ...byActor(actor), subject: `project:${row.id}`, detail: { name: trimmed } }, trx);
      return row.id;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError("Project name already exists. Please choose another name");
    throw err;
  }
}

/** A project's members with their roles (the admin console's project page). */
export async function projectMembers(scope: ProjectScope) {
  requireAdmin(scope.actor);
  return db()
    .selectFrom("project_members as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .select(["u.id", "u.email", "u.name", "u.surname", "u.status", "m.role"])
    .where("m.project_id", "=", scope.project.id)
    .orderBy("u.email")
    .execute();
}

/**
 * Points the project at a stored logo (or none) and returns the key it had, which the caller deletes when no
 * project uses it any more (keys are content hashes, so two projects may share one).
 */
export async function setProjectLogo(actor: Actor, projectId: number, key: string | null) {
  requireAdmin(actor);
  return write(async (trx, touched) => {
    const before = await trx.selectFrom("projects").select("logo_key").where("id", "=", projectId).executeTakeFirst();
    if (!before) throw new NotFoundError("Project not found");
    await trx.updateTable("projects").set({ logo_key: key }).where("id", "=", projectId).execute();
    touched.project(projectId);
    await recordAudit(
      { action: "project.logo_changed", ...byActor(actor), subject: `project:${projectId}`, detail: { removed: key === null } },
      trx,
    );
    const stillUsed =
      before.logo_key && (await trx.selectFrom("projects").select("id").where("logo_key", "=", before.logo_key).executeTakeFirst());
    return before.logo_key && !stillUsed ? before.logo_key : null;
  });
}

/** The logo key of a project the actor can see (the logo route). */
export async function projectLogoKey(actor: Actor, projectId: number): Promise<string | null> {
  const row = await db()
    .selectFrom("projects")
    .select("logo_key")
    .where("id", "=", projectId)
    .where("id", "in", visibleProjectIds(actor))
    .executeTakeFirst();
  return row?.logo_key ?? null;
}
