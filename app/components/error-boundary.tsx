import { isRouteErrorResponse, Link, useRouteError } from "@remix-run/react";
import type { ErrorLink } from "~/lib/errors";

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

export interface DescribedError {
  status: number;
  message: string;
  /** A sentence under the heading (the upload pages' 'Please select a client from the dashboard'). */
  detail?: string;
  /** Where the person can go instead (a viewer refused a write page: the project they can open). */
  link?: ErrorLink;
}

const text = (v: unknown) => (typeof v === "string" && v ? v : undefined);

/**
 * What went wrong, for the person: the status, a message and what the error adds (HttpError's `more`, passed on by
 * `page()`). Never a stack trace or an internal message: a 5xx shows only the status's own words.
 */
export function describeError(error: unknown): DescribedError {
  if (isRouteErrorResponse(error)) {
    if (error.status >= 500) return { status: error.status, message: DEFAULTS[error.status] ?? "Server error" };
    const own = (error.data ?? null) as { message?: unknown; detail?: unknown; link?: { href?: unknown; label?: unknown } } | null;
    const href = text(own?.link?.href);
    const label = text(own?.link?.label);
    return {
      status: error.status,
      message: text(own?.message) ?? DEFAULTS[error.status] ?? "Server error",
      detail: text(own?.detail),
      // Only a path of this site: the link is the app's own, never one a request could have put there.
      link: href?.startsWith("/") && !href.startsWith("//") && label ? { href, label } : undefined,
    };
  }
  return { status: 500, message: "Server error" };
}

/**
 * Every route's error boundary: the message of the status (the models' 404s carry the spec's
 * "No Projects Found with ID: …", a refused write "You can view this project but not change it."), what the error
 * adds, and a way back. Renders inside the signed-in layout.
 */
export function GeneralErrorBoundary() {
  const { status, message, detail, link } = describeError(useRouteError());
  return (
    <div className="not-found" role="alert">
      <h1>{message}</h1>
      {detail ? <p>{detail}</p> : null}
      {status >= 500 ? <p>Please try again. If the problem persists, please contact support.</p> : null}
      <p className="form-actions">
        {link ? (
          <Link to={link.href} className="btn btn-primary">
            {link.label}
          </Link>
        ) : null}
        <Link to="/dashboard" className={link ? "btn" : "btn btn-primary"}>
          Back to dashboard
        </Link>
      </p>
    </div>
  );
}
