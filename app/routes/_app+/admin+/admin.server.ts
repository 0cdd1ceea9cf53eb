import { HttpError } from "~/lib/errors";
import { requireAdmin, type Actor } from "~/models/actor";
import { page } from "../../../web/http.server";
import { requireActor, type RequestContext } from "~/sessions.server";

/**
 * The admin console's guard for every loader and action: signed in, and the admin role, or 404 (the models check
 * the role again). Checked per request, so a role taken away takes effect on the next click.
 */
export async function adminActor(request: Request, context: RequestContext): Promise<Actor> {
  const actor = await requireActor(request, context);
  requireAdmin(actor);
  return actor;
}

/** The action of a console page that takes no posts: 404 to anyone but an admin, then 405. */
export const noPosts = page(async ({ request, context }: { request: Request; context: RequestContext }) => {
  await adminActor(request, context);
  throw new HttpError(405, "Method not allowed");
});
