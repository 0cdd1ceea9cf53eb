import { isRouteErrorResponse, Link, useRouteError } from "@remix-run/react";

/** The spec's generic messages per status (its error catalogue), for failures that carry no message of their own. */
const DEFAULTS: Record<number, string> = {
  400: "Data format error",
  404: "Page not found",
  405: "Method not allowed",
  409: "Already exists",
  413: "The request is too large.",
  415: "Unsupported content type",
  422: "Unprocessable Entity",
  429: "Too many requests. Please wait a moment and try again.",
};

/** What went wrong, for the person: the status and a message. Never a stack trace or an internal message. */
export function describeError(error: unknown): { status: number; message: string } {
  if (isRouteErrorResponse(error)) {
    const own = (error.data as { message?: unknown } | null)?.message;
    const message = error.status < 500 && typeof own === "string" && own ? own : (DEFAULTS[error.status] ?? "Server error");
    return { status: error.status, message };
  }
  return { status: 500, message: "Server error" };
}

/**
 * Every route's error boundary: the message of the status (the models' 404s carry the spec's
 * "No Projects Found with ID: …"), and a way back. Renders inside the signed-in layout.
 */
export function GeneralErrorBoundary() {
  const { status, message } = describeError(useRouteError());
  return (
    <div className="not-found" role="alert">
      <h1>{message}</h1>
      {status >= 500 ? <p>Please try again. If the problem persists, please contact support.</p> : null}
      <p>
        <Link to="/dashboard" className="btn btn-primary">
          Back to dashboard
        </Link>
      </p>
    </div>
  );
}
