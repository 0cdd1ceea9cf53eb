import { sql } from "kysely";
import { db } from "~/db/connection.server";
import type { Project } from "~/db/schema";
import { ConflictError } from "~/lib/errors";
import type { Actor } from "./actor";
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
export async function editProject(scope: ProjectScope, name: string, wsc?: { wsc: boolean; source: string }) {
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
      await trx
        .updateTable("projects")
        .set(wsc ? { name: trimmed, wsc: wsc.wsc ? 1 : 0, wsc_source: wsc.source || null } : { name: trimmed })
        .where("id", "=", scope.project.id)
        .execute();
      touched.project(scope.project.id);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError("Project name already exists. Please choose another name");
    throw err;
  }
}
