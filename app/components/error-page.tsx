import { Link } from "@remix-run/react";
import { Logo } from "./logo";

/** The /404 page and the root error boundary: a plain message and a way back to the dashboard. */
export function ErrorPage({ status, message }: { status: number; message?: string }) {
  const title = status === 404 ? "Page not found" : (message ?? "Something went wrong");
  return (
    <main className="error-page" aria-labelledby="error-title">
      <Logo />
      <p className="error-code" aria-hidden="true">
        {status}
      </p>
      <h1 id="error-title">{title}</h1>
      <p>
        {status === 404
          ? "The page you are looking for does not exist or you do not have access to it."
          : "Please try again. If the problem persists, please contact support."}
      </p>
      <Link to="/dashboard" className="btn btn-primary">
        Back to dashboard
      </Link>
    </main>
  );
}
