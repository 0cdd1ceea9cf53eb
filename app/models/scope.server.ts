import { sql } from "kysely";
import { db } from "~/db/connection.server";
import { StatementCache } from "~/db/statements.server";
import { NotAllowedError, NotFoundError } from "~/lib/errors";
import { filterSearch, gridFilterOf, type GridFilter } from "~/lib/grid-filter";
import type { Image } from "~/db/schema";
import type { Actor } from "./actor";
import { parseId } from "~/lib/ids";

/**
 * What one request may touch, resolved once (one query) and passed to every model function it calls:
 * a project, a board, or (for share links) a board opened by a token. The scope carries the actor's role and
 * permissions and the version of what it covers, so nothing downstream checks membership or reads the
 * version again. Anything outside the actor's reach is a NotFoundError with the spec's message: 404, never 403.
 * Within reach but beyond the actor's role (a viewer on a write page) is a NotAllowedError: 403, saying what is true.
 */
export type ProjectRole = "viewer" | "editor" | "manager";

/**
 * Viewers read and download; editors also change images, boards, keywords and attribute values; managers
 * also rename the project and manage its attributes. The global admin role may do everything everywhere.
 * `select`: the grid offers a selection (never on a shared board).
 */
export interface Permissions {
  edit: boolean;
  manage: boolean;
  download: boolean;
  select: boolean;
}

export interface ProjectRef {
  id: number;
  name: string;
  logoKey: string | null;
  wsc: boolean;
  wscSource: string | null;
  /** Whether its images keep the GPS position their EXIF gives (off by default; the manager's choice). */
  keepGps: boolean;
  /** projects.updated_at: moves on with every write to the project's images (see write.server.ts). */
  version: number;
}

export interface BoardRef {
  id: string;
  title: string;
  coverImageId: number | null;
  clientBoard: boolean;
  /** boards.updated_at: moves on with every change of the board or of an image on it. */
  version: number;
}

export interface ProjectScope {
  kind: "project";
  actor: Actor;
  project: ProjectRef;
  role: ProjectRole | "admin";
  can: Permissions;
  /** What narrows the grid (see withFilter). */
  filter?: GridFilter;
}

/**
 * A grid's scope as one of its pages sees it: narrowed by the URL's filter (keyword search `q`; on a board also the
 * review filter `review`), which every page, selection, bulk action and download of the grid then keeps.
 */
export function withFilter<S extends GridScope>(scope: S, from: Request | URLSearchParams): S {
  const filter = gridFilterOf(from instanceof URLSearchParams ? from : new URL(from.url).searchParams);
  if (scope.kind !== "board") delete filter.review;
  // Shared boards offer keyword and attribute search only (spec 1, Sidebar); nor do they show capture dates, which a
  // range or an order would let a visitor work out.
  if (scope.kind === "shared") {
    delete filter.smart;
    delete filter.tags;
    delete filter.sort;
    delete filter.takenFrom;
    delete filter.takenTo;
  }
  return { ...scope, filter };
}

export interface BoardScope {
  kind: "board";
  actor: Actor;
  project: ProjectRef;
  board: BoardRef;
  role: ProjectRole | "admin";
  can: Permissions;
  filter?: GridFilter;
}

/** A public share link's visitor: a second kind of actor, read-only, on one board (filled by the sharing feature). */
export interface ShareLinkRef {
  id: number;
  allowDownload: boolean;
  showMetadata: boolean;
}
export interface SharedBoardScope {
  kind: "shared";
  link: ShareLinkRef;
  project: ProjectRef;
  board: BoardRef;
  can: Permissions;
  filter?: GridFilter;
}

/**
 * Every project the actor belongs to at once: the cross-project search's result (spec: /result/keyword/:tags).
 * Read-only here (no selection, no bulk actions: those act in one project); `version` is the newest of the projects'.
 */
export interface AllProjectsScope {
  kind: "all";
  actor: Actor;
  version: number;
  can: Permissions;
  filter?: GridFilter;
}

/** The scopes an image grid can show. */
export type GridScope = ProjectScope | BoardScope | SharedBoardScope | AllProjectsScope;
/** The scopes inside one project (downloads, CSV: their attribute columns are the project's). */
export type OneProjectScope = ProjectScope | BoardScope | SharedBoardScope;
/** Scopes a signed-in actor works in. */
export type MemberScope = ProjectScope | BoardScope;

export function permissionsOf(role: ProjectRole | "admin"): Permissions {
  const edit = role !== "viewer";
  return { edit, manage: role === "manager" || role === "admin", download: true, select: true };
}

export { MAX_ID, parseId } from "~/lib/ids";

/** An id as typed, for a "not found" message: shown escaped by React, capped so a URL cannot fill the page. */
const echo = (raw: unknown) => String(raw ?? "").slice(0, 80);
export const projectNotFound = (raw: unknown) => new NotFoundError(`No Projects Found with ID: ${echo(raw)}`);
export const boardNotFound = (raw: unknown) => new NotFoundError(`No Board Found with ID: ${echo(raw)}`);
/** The upload pages' words for the same (spec 2's 'Client not found' dialog and its fallback state). */
export const clientNotFound = (raw: unknown) =>
  new NotFoundError("Client not found", {
    detail: `No Client with ID ${echo(raw)} found. Please select a client from the dashboard.`,
  });

const projectColumns = ["p.id", "p.name", "p.logo_key", "p.wsc", "p.wsc_source", "p.keep_gps", "p.updated_at"] as const;
type ProjectRow = {
  id: number;
  name: string;
  logo_key: string | null;
  wsc: number;
  wsc_source: string | null;
  keep_gps: number;
  updated_at: number;
};
const projectRef = (r: ProjectRow): ProjectRef => ({
  id: r.id,
  name: r.name,
  logoKey: r.logo_key,
  wsc: r.wsc === 1,
  wscSource: r.wsc_source,
  keepGps: r.keep_gps === 1,
  version: Number(r.updated_at),
});
/** A board as scopes carry it, from the columns every board query selects (`b.id as board_id`, `b.updated_at as board_version`). */
export const boardRef = (r: {
  board_id: string;
  title: string;
  cover_image_id: number | null;
  is_client_board: number;
  board_version: number | string | bigint;
}): BoardRef => ({
  id: r.board_id,
  title: r.title,
  coverImageId: r.cover_image_id,
  clientBoard: r.is_client_board === 1,
  version: Number(r.board_version),
});
/**
 * The actor's role in a project, or null: none. A token's grant narrows it: a project it does not list is out of
 * reach, and a read-only token reads whatever its owner's role.
 */
function roleOf(actor: Actor, membership: ProjectRole | null, projectId: number): ProjectRole | "admin" | null {
  const role = actor.role === "admin" ? "admin" : membership;
  const grant = actor.grant;
  if (!role || !grant) return role;
  if (grant.projects && !grant.projects.includes(projectId)) return null;
  return grant.write ? role : "viewer";
}

/** The scope look-ups every request makes, built once (app/db/statements.server.ts). */
const scopeStatements = new StatementCache();

/**
 * The project and the actor's role in it, in one query; not found unless the actor is a member (or an admin).
 * `notFound` words the refusal for the page asking (an unknown and a foreign id always alike).
 */
export async function projectScope(actor: Actor, rawId: unknown, notFound = projectNotFound): Promise<ProjectScope> {
  const id = parseId(rawId);
  const row =
    id === null
      ? undefined
      : (
          await scopeStatements.rows("project", [id, actor.id], (d, projectId: number, userId: number) =>
            d
              .selectFrom("projects as p")
              .leftJoin("project_members as m", (join) => join.onRef("m.project_id", "=", "p.id").on("m.user_id", "=", userId))
              .select([...projectColumns, "m.role"])
              .where("p.id", "=", projectId),
          )
        )[0];
  const role = row ? roleOf(actor, row.role, row.id) : null;
  if (!row || !role) throw notFound(rawId);
  return { kind: "project", actor, project: projectRef(row), role, can: permissionsOf(role) };
}

/**
 * A board and the actor's role in its project, in one query. With `projectId` (the URL's clientID) the board
 * must belong to that project: a board under the wrong project id is not found either.
 */
export async function boardScope(actor: Actor, rawBoardId: unknown, projectId?: unknown): Promise<BoardScope> {
  const boardId = typeof rawBoardId === "string" && rawBoardId.length <= 64 ? rawBoardId : null;
  const row =
    boardId === null
      ? undefined
      : (
          await scopeStatements.rows("board", [boardId, actor.id], (d, id: string, userId: number) =>
            d
              .selectFrom("boards as b")
              .innerJoin("projects as p", "p.id", "b.project_id")
              .leftJoin("project_members as m", (join) => join.onRef("m.project_id", "=", "p.id").on("m.user_id", "=", userId))
              .select([
                ...projectColumns,
                "m.role",
                "b.id as board_id",
                "b.title",
                "b.cover_image_id",
                "b.is_client_board",
                "b.updated_at as board_version",
              ])
              .where("b.id", "=", id),
          )
        )[0];
  const role = row ? roleOf(actor, row.role, row.id) : null;
  if (!row || !role || (projectId !== undefined && String(row.id) !== String(projectId).trim())) throw boardNotFound(rawBoardId);
  return {
    kind: "board",
    actor,
    project: projectRef(row),
    board: boardRef(row),
    role,
    can: permissionsOf(role),
  };
}

/** The project of a resolved board scope, with the same actor and role: derived, not looked up again. */
export const projectOfBoard = (scope: BoardScope): ProjectScope => ({
  kind: "project",
  actor: scope.actor,
  project: scope.project,
  role: scope.role,
  can: scope.can,
});

/**
 * A member whose role does not allow this: what is true, and the project or board they can open. Only for a scope
 * already resolved, so only for what the person can see: a stranger never gets this far (their 404 says nothing).
 */
function notAllowed(scope: MemberScope, need: "edit" | "manage") {
  if (scope.kind === "board" && need === "edit")
    return new NotAllowedError("You can view this board but not change it.", {
      href: `/${scope.project.id}/board/${scope.board.id}`,
      label: `Open ${scope.board.title}`,
    });
  const message =
    need === "manage" && scope.can.edit ? "You can edit this project but not manage it." : "You can view this project but not change it.";
  return new NotAllowedError(message, { href: `/client/${scope.project.id}`, label: `Open ${scope.project.name}` });
}

/** The scope's writes are allowed, or a 403 saying what the person may do (see notAllowed). */
export function requireEdit<S extends MemberScope>(scope: S): S {
  if (!scope.can.edit) throw notAllowed(scope, "edit");
  return scope;
}

/** The project's attributes, name and re-import are the actor's to change (managers, admins), or a 403 as above. */
export function requireManage<S extends MemberScope>(scope: S): S {
  if (!scope.can.manage) throw notAllowed(scope, "manage");
  return scope;
}

/** A short key naming the scope (selection cookies, caches). */
export const scopeKey = (scope: GridScope) => {
  // A share link without downloads searches less (no file names): its counts are its own.
  const base =
    scope.kind === "project"
      ? `p:${scope.project.id}`
      : scope.kind === "all"
        ? `a:${scope.actor.id}`
        : scope.kind === "shared" && !scope.link.allowDownload
          ? `s:${scope.board.id}`
          : `b:${scope.board.id}`;
  const filter = filterSearch(scope.filter);
  return filter ? `${base}?${filter}` : base;
};

/** The version that ETags, counts and the freshness check follow. */
export const scopeVersion = (scope: GridScope) =>
  scope.kind === "project" ? scope.project.version : scope.kind === "all" ? scope.version : scope.board.version;

/**
 * The ids of the projects an actor may see, as a subquery, for lists (all projects, all boards, search across
 * projects). A single target is resolved with projectScope / boardScope instead.
 */
export function visibleProjectIds(actor: Actor) {
  const listed = actor.grant?.projects;
  if (actor.role === "admin") {
    const all = db().selectFrom("projects").select("projects.id as id");
    return listed ? all.where("projects.id", "in", listed.length ? [...listed] : [0]) : all;
  }
  const mine = db()
    .selectFrom("project_members")
    .select("project_members.project_id as id")
    .where("project_members.user_id", "=", actor.id);
  return listed ? mine.where("project_members.project_id", "in", listed.length ? [...listed] : [0]) : mine;
}

/** Every project the actor may see, as one read-only grid scope (one query, for its version). */
export async function allProjectsScope(actor: Actor): Promise<AllProjectsScope> {
  const row = await db()
    .selectFrom("projects")
    .select(sql<number | null>`max(projects.updated_at)`.as("version"))
    .where("projects.id", "in", visibleProjectIds(actor))
    .executeTakeFirst();
  return {
    kind: "all",
    actor,
    version: Number(row?.version ?? 0),
    can: { edit: false, manage: false, download: true, select: false },
  };
}

/** An image the actor may see, with the project scope it lives in, in one query. */
export async function imageScope(actor: Actor, rawId: unknown): Promise<{ scope: ProjectScope; image: Image }> {
  const id = parseId(rawId);
  const row =
    id === null
      ? undefined
      : await db()
          .selectFrom("images as i")
          .innerJoin("projects as p", "p.id", "i.project_id")
          .leftJoin("project_members as m", (join) => join.onRef("m.project_id", "=", "p.id").on("m.user_id", "=", actor.id))
          .selectAll("i")
          .select([
            "p.name as p_name",
            "p.logo_key as p_logo_key",
            "p.wsc as p_wsc",
            "p.wsc_source as p_wsc_source",
            "p.keep_gps as p_keep_gps",
            "p.updated_at as p_updated_at",
            "m.role as m_role",
          ])
          .where("i.id", "=", id)
          .executeTakeFirst();
  const role = row ? roleOf(actor, row.m_role, row.project_id) : null;
  if (!row || !role) throw new NotFoundError("Image not found");
  const { p_name, p_logo_key, p_wsc, p_wsc_source, p_keep_gps, p_updated_at, m_role: _role, ...image } = row;
  const project = projectRef({
    id: image.project_id,
    name: p_name,
    logo_key: p_logo_key,
    wsc: p_wsc,
    wsc_source: p_wsc_source,
    keep_gps: p_keep_gps,
    updated_at: p_updated_at,
  });
  return { scope: { kind: "project", actor, project, role, can: permissionsOf(role) }, image };
}
