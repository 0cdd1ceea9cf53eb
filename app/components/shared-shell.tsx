import { isRouteErrorResponse, useRouteError } from "@remix-run/react";
import type { ReactNode } from "react";
import { Logo } from "./logo";
import { SKIP_TO_CONTENT, SkipLinks, type SkipLink } from "./skip-links";

/** The frame of a shared board's pages: the Koala mark and the board's title, nothing of the signed-in app. */
export function SharedShell({ title, skipLinks = [], children }: { title: string; skipLinks?: SkipLink[]; children: ReactNode }) {
  return (
    <div className="shared-page">
      <SkipLinks links={[SKIP_TO_CONTENT, ...skipLinks]} />
      <header className="shared-header">
        <Logo small />
        <span className="muted">Shared board</span>
      </header>
      <main id="main" className="app-main" tabIndex={-1}>
        <h1>{title}</h1>
        {children}
      </main>
    </div>
  );
}

/**
 * A share link that is not (or no longer) valid: 'Invalid URL / The URL is invalid' (404), or expired / revoked with
 * who to ask (410). No way into the app from here: the visitor has no account.
 */
export function SharedErrorBoundary() {
  const error = useRouteError();
  const known = isRouteErrorResponse(error) && (error.status === 404 || error.status === 410 || error.status === 429);
  const body = (known ? error.data : null) as { message?: string; detail?: string } | null;
  return (
    <div className="shared-page">
      <header className="shared-header">
        <Logo small />
      </header>
      <main id="main" className="app-main error-page" aria-labelledby="shared-error-title">
        <h1 id="shared-error-title">{body?.message ?? (known && error.status === 429 ? "Too many attempts" : "Something went wrong")}</h1>
        <p>{body?.detail ?? (known && error.status === 429 ? "Please wait a few minutes and try again." : "Please try again later.")}</p>
      </main>
    </div>
  );
}
