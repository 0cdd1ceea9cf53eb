import { requireAdmin, type Actor } from "~/models/actor";
import { requireActor } from "~/sessions.server";

/**
 * The admin console's guard for every loader and action: signed in, and the admin role, or 404 (the models check
 * the role again). Checked per request, so a role taken away takes effect on the next click.
 */
export async function adminActor(request: Request): Promise<Actor> {
  const actor = await requireActor(request);
  requireAdmin(actor);
  return actor;
}

/** A positive id from a URL segment or a field, or null. */
export function idOf(value: unknown): number | null {
  const s = typeof value === "string" ? value : "";
  return /^[1-9]\d{0,9}$/.test(s) && Number(s) <= 2_147_483_647 ? Number(s) : null;
}
