import { db } from "~/db/connection.server";
import type { Actor } from "./actor";

/**
 * The ids of the projects an actor may see, as a subquery: admins see every project,
 * everyone else only projects they are a member of. Every model filters through this.
 */
export function visibleProjectIds(actor: Actor) {
  if (actor.role === "admin") return db().selectFrom("projects").select("projects.id as id");
  return db()
    .selectFrom("project_members")
    .select("project_members.project_id as id")
    .where("project_members.user_id", "=", actor.id);
}

export async function canSeeProject(actor: Actor, projectId: number): Promise<boolean> {
  if (!Number.isSafeInteger(projectId)) return false;
  const row = await db()
    .selectFrom("projects")
    .select("id")
    .where("id", "=", projectId)
    .where("id", "in", visibleProjectIds(actor))
    .executeTakeFirst();
  return Boolean(row);
}
