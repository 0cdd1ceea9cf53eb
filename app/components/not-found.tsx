import { isRouteErrorResponse, Link, useRouteError } from "@remix-run/react";
import { ErrorPage } from "./error-page";

/** A route's error boundary: a 404 with the model's message (the spec's "No … Found with ID: …"), else the generic page. */
export function NotFoundBoundary() {
  const error = useRouteError();
  if (isRouteErrorResponse(error) && error.status === 404) {
    const message = (error.data as { message?: string } | null)?.message ?? "Not found";
    return (
      <div className="not-found" role="alert">
        <h1>{message}</h1>
        <p>
          <Link to="/dashboard" className="btn btn-primary">
            Back to dashboard
          </Link>
        </p>
      </div>
    );
  }
  return <ErrorPage status={500} message="Server error" />;
}
