import type { NotFoundError } from "~/lib/errors";
import { boardScope, imageScope, projectScope, requireEdit, requireManage, withFilter, type MemberScope } from "~/models/scope.server";
import { withSmartTags } from "~/services/smart-search.server";
import { requireActor, type RequestContext } from "~/sessions.server";

/**
 * The project or board a page's URL names, for the signed-in actor, in one call shared by every page: an unknown or
 * foreign id is a 404 (NotFoundError), a role short of `need` a 403 saying what the person may do (scope.server.ts).
 * `context` gives the actor their address, for the audit log of the writes the page makes.
 */
export interface ScopeRequest {
  request: Request;
  context: RequestContext;
}

/** view: any member; write: editors and managers; manage: managers (admins may do all three). */
export type Need = "view" | "write" | "manage";

interface ScopeOptions {
  need?: Need;
  /** A grid page's scope: narrowed by the URL's filter, with a smart search's tags resolved. */
  filtered?: boolean;
}

async function finish<S extends MemberScope>(scope: S, request: Request, { need = "view", filtered }: ScopeOptions): Promise<S> {
  if (need === "write") requireEdit(scope);
  else if (need === "manage") requireManage(scope);
  return filtered ? withSmartTags(withFilter(scope, request)) : scope;
}

/** The project of `id`; `notFound` words its 404 for the page asking (the upload pages' 'Client not found'). */
export async function projectScopeOf(
  { request, context }: ScopeRequest,
  id: string | undefined,
  opts: ScopeOptions & { notFound?: (raw: unknown) => NotFoundError } = {},
) {
  return finish(await projectScope(await requireActor(request, context), id, opts.notFound), request, opts);
}

/** The board of `boardID`, which must belong to the project `clientID`. */
export async function boardScopeOf(
  { request, context }: ScopeRequest,
  params: { clientID?: string; boardID?: string },
  opts: ScopeOptions = {},
) {
  return finish(await boardScope(await requireActor(request, context), params.boardID, params.clientID), request, opts);
}

/** The image of `id` with its project's scope (a role short of `need` as above). */
export async function imageScopeOf({ request, context }: ScopeRequest, id: string | undefined, opts: Pick<ScopeOptions, "need"> = {}) {
  const { scope, image } = await imageScope(await requireActor(request, context), id);
  return { scope: await finish(scope, request, opts), image };
}
