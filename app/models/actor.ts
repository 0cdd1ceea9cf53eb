/** Who is acting. Every model function that reads or writes user data takes one. */
export interface Actor {
  id: number;
  role: "user" | "admin";
}

/** Thrown by models for anything outside the actor's projects; routes answer 404. */
export class NotFoundError extends Error {
  constructor(what = "Not found") {
    super(what);
    this.name = "NotFoundError";
  }
}

/** The command line and seeds: full rights, recorded as no user in created_by / changed_by columns. */
export const SYSTEM: Actor = { id: 0, role: "admin" };
export const recordedAs = (actor: Actor): number | null => (actor.id === SYSTEM.id ? null : actor.id);
