/**
 * Expected failures, each with the HTTP status it answers with. Models and services throw these; routes map
 * them in one place (`page` and `api` in app/lib/http.server.ts), so no route turns an error into a status itself.
 * Anything outside an actor's reach is a NotFoundError: 404, never 403, never data. A NotAllowedError (403) is only
 * for what the person can already see (a viewer asking for a project's write page).
 */
export interface ErrorLink {
  href: string;
  label: string;
}

/** What an error page shows beyond its heading: a sentence, and a way on (both public to whoever gets the error). */
export interface ErrorMore {
  detail?: string;
  link?: ErrorLink;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly more: ErrorMore = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export class NotFoundError extends HttpError {
  constructor(message = "Not found", more: ErrorMore = {}) {
    super(404, message, {}, more);
    this.name = "NotFoundError";
  }
}

/**
 * The person sees this project or board but their role does not let them do this: what is true ("You can view this
 * project but not change it") and a link to what they can open. Never for anything outside their reach (that is a
 * NotFoundError, which reveals nothing).
 */
export class NotAllowedError extends HttpError {
  constructor(message: string, link: ErrorLink) {
    super(403, message, {}, { link });
    this.name = "NotAllowedError";
  }
}

/** Bad input: the spec's message for it, and nothing changed. */
export class InvalidError extends HttpError {
  constructor(message = "Data format error", status = 400) {
    super(status, message);
    this.name = "InvalidError";
  }
}

export class ConflictError extends HttpError {
  constructor(message = "Already exists") {
    super(409, message);
    this.name = "ConflictError";
  }
}

export class TooLargeError extends HttpError {
  constructor(message = "The request is too large.") {
    super(413, message);
    this.name = "TooLargeError";
  }
}

export class TooManyRequestsError extends HttpError {
  constructor(message: string, retryAfterSeconds?: number) {
    super(429, message, retryAfterSeconds ? { "Retry-After": String(retryAfterSeconds) } : {});
    this.name = "TooManyRequestsError";
  }
}

/** The message of anything thrown, for logs and generic replies. */
export const getErrorMessage = (error: unknown) =>
  error instanceof Error ? error.message : typeof error === "string" ? error : "Unknown error";
