import { sql } from "kysely";
import { db } from "~/db/connection.server";
import type { Project } from "~/db/schema";
import { canSeeProject, visibleProjectIds } from "./access.server";
import { NotFoundError, type Actor } from "./actor";

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

/** The project, or NotFoundError when it does not exist or the actor is not a member. */
export async function getProject(actor: Actor, projectId: number): Promise<ProjectSummary> {
  const row = Number.isSafeInteger(projectId)
    ? await db()
        .selectFrom("projects")
        .select(["id", "name", "logo_key", "wsc", "updated_at"])
        .where("id", "=", projectId)
        .where("id", "in", visibleProjectIds(actor))
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFoundError(`No Projects Found with ID: ${projectId}`);
  return row;
}

/** Editors and managers of a project, and admins, may change its content. */
export async function assertCanEdit(actor: Actor, projectId: number) {
  if (actor.role === "admin") {
    if (!(await canSeeProject(actor, projectId))) throw new NotFoundError(`No Projects Found with ID: ${projectId}`);
    return;
  }
  const row = await db()
    .selectFrom("project_members")
    .select("role")
    .where("project_id", "=", projectId)
    .where("user_id", "=", actor.id)
    .executeTakeFirst();
  if (!row || row.role === "viewer") throw new NotFoundError(`No Projects Found with ID: ${projectId}`);
}

export async function canEditProject(actor: Actor, projectId: number): Promise<boolean> {
  return assertCanEdit(actor, projectId).then(
    () => true,
    (err: unknown) => {
      if (err instanceof NotFoundError) return false;
      throw err;
    },
  );
}

/** Administrative: creates a project (CLI, demo). */
export async function createProject(input: { name: string; wsc?: boolean; wscSource?: string | null }): Promise<Project> {
  const now = Date.now();
  return db()
    .insertInto("projects")
    .values({ name: input.name.trim(), wsc: input.wsc ? 1 : 0, wsc_source: input.wscSource ?? null, logo_key: null, created_at: now, updated_at: now })
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
 * A scope's new `updated_at` after a write: now, or one past the current value when that is not older, so two
 * writes in the same millisecond still give two versions (the grid's freshness check and cached counts rely on it).
 */
export const nextVersion = (at: number) => sql<number>`case when updated_at >= ${at} then updated_at + 1 else ${at} end`;

export async function touchProject(projectId: number, at = Date.now()) {
  await db().updateTable("projects").set({ updated_at: nextVersion(at) }).where("id", "=", projectId).execute();
}
