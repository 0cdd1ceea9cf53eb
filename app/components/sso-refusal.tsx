import { Link } from "@remix-run/react";
import { Logo } from "./logo";

/** A refused company sign-in, as the person reads it: what happened, whom to ask, and the way back. */
export function SsoRefusalPage({
  message,
  contacts,
  applyUrl = null,
}: {
  message: string;
  contacts: { name: string; email: string }[];
  applyUrl?: string | null;
}) {
  return (
    <main className="auth-page" aria-labelledby="sso-title">
      <Logo />
      <h1 id="sso-title">Sign-in not completed</h1>
      <p role="alert">{message}</p>
      {contacts.length ? (
        <>
          <p>Koala administrators:</p>
          <ul className="plain-list">
            {contacts.map((c) => (
              <li key={c.email}>
                {c.name} (<a href={`mailto:${c.email}`}>{c.email}</a>)
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {applyUrl ? (
        <Link to={applyUrl} className="btn btn-primary">
          Apply for an account
        </Link>
      ) : null}
      <Link to="/login" className={applyUrl ? "btn" : "btn btn-primary"}>
        Back to sign in
      </Link>
    </main>
  );
}
