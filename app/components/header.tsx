import { Form, Link, useLocation } from "@remix-run/react";
import { useEffect, useRef } from "react";
import type { Theme } from "~/sessions.server";
import { initialsOf } from "~/lib/initials";
import { Logo } from "./logo";

/** The project or board in view: its name, and the project the header's actions work on. */
export interface HeaderContext {
  title: string;
  projectId: number;
  projectName: string;
  kind: "project" | "board";
}

export interface HeaderProps {
  user: { name: string; surname: string; email: string };
  theme: Theme;
  context: HeaderContext | null;
}

/**
 * The signed-in header. The profile menu is a <details> element: it opens with Enter or Space and
 * works without JavaScript; with JavaScript, Escape and a click outside close it.
 */
export function Header({ user, theme, context }: HeaderProps) {
  const location = useLocation();
  const here = location.pathname + location.search;
  const menu = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    const el = menu.current;
    if (!el) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && el.open) {
        el.open = false;
        el.querySelector("summary")?.focus();
      }
    };
    const onClick = (e: MouseEvent) => {
      if (el.open && !el.contains(e.target as Node)) el.open = false;
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("click", onClick);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("click", onClick);
    };
  }, []);
  useEffect(() => {
    if (menu.current) menu.current.open = false;
  }, [location.key]);

  const initials = initialsOf(`${user.name} ${user.surname}`) || "?";
  const nextTheme: Theme = theme === "darkmode" ? "lightmode" : "darkmode";
  return (
    <header className="app-header">
      <Link to="/dashboard" className="header-logo" aria-label="Koala dashboard">
        <Logo small />
      </Link>
      <div className="header-context">
        {context ? (
          <>
            <span className="header-title">{context.title}</span>
            <nav aria-label={`${context.kind === "project" ? "Project" : "Board"} actions`} className="header-icons">
              <Link to={`/client/${context.projectId}/edit`} title={`Edit ${context.kind}`} aria-label={`Edit ${context.kind}`}>
                <span aria-hidden="true">✎</span>
              </Link>
              <Link to={`/upload/${context.projectId}`} title="Upload images" aria-label="Upload images">
                <span aria-hidden="true">⇪</span>
              </Link>
              <Link to={`/client/${context.projectId}/boards/new`} title="Create board" aria-label="Create board">
                <span aria-hidden="true">＋</span>
              </Link>
            </nav>
          </>
        ) : null}
      </div>
      <nav aria-label="Account" className="header-actions">
        <Link
          to="/all-clients"
          className="project-logo"
          aria-label={context ? `${initialsOf(context.projectName)}: all projects` : "All projects"}
          title="All projects"
        >
          {context ? initialsOf(context.projectName) : <span aria-hidden="true">▦</span>}
        </Link>
        <details className="profile-menu" ref={menu}>
          <summary aria-label={`${initials}: profile menu for ${user.name} ${user.surname}`}>
            <span className="avatar">
              {initials}
            </span>
          </summary>
          <div className="menu-panel">
            <p className="menu-user">
              <strong>
                {user.name} {user.surname}
              </strong>
              <span>{user.email}</span>
            </p>
            <ul>
              <li>
                <Link to="/all-boards">View All Boards</Link>
              </li>
              <li>
                <Form method="post" action="/theme">
                  <input type="hidden" name="theme" value={nextTheme} />
                  <input type="hidden" name="redirectTo" value={here} />
                  <button type="submit">{theme === "darkmode" ? "Light Mode" : "Dark Mode"}</button>
                </Form>
              </li>
              <li>
                <Form method="post" action="/logout">
                  <button type="submit">Logout</button>
                </Form>
              </li>
            </ul>
          </div>
        </details>
      </nav>
    </header>
  );
}
