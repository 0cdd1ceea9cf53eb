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
