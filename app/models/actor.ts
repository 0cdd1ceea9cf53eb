import { NotFoundError } from "~/lib/errors";

/** A signed-in person (or the system), as the models see them. Every read or write of user data starts from one. */
export interface Actor {
  id: number;
  role: "user" | "admin";
  /** The address the request came from, for the audit log (a job keeps the one that started it); none for the CLI. */
  ip?: string | null;
  /** Set when the request came with a personal access token: what the token narrows its owner to. */
  grant?: Grant;
}

/**
 * A personal access token's reach: its owner's, narrowed to reading (`write: false`: every role is read as a
 * viewer's) and to the projects listed (`projects`; null: all of the owner's). Enforced where scopes are resolved.
 */
export interface Grant {
  tokenId: number;
  write: boolean;
  projects: readonly number[] | null;
}

/** The actor a signed-in user is, with the address their request came from (for the audit log). */
export const actorOf = (user: { id: number; role: "user" | "admin" }, ip: string | null = null): Actor => ({
  id: user.id,
  role: user.role,
  ip,
});

/** The command line and seeds: full rights, recorded as no user in created_by / changed_by columns. */
export const SYSTEM: Actor = { id: 0, role: "admin" };
export const recordedAs = (actor: Actor): number | null => (actor.id === SYSTEM.id ? null : actor.id);

/** The admin console's guard, in every admin model function: anyone else is told the page does not exist. */
export function requireAdmin(actor: Actor): void {
  // A token never administers, even an admin's: the console is for people at their browser.
  if (actor.role !== "admin" || actor.grant) throw new NotFoundError("Page not found");
}
