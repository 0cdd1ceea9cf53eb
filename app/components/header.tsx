import { Form, Link, useLocation, useNavigate } from "@remix-run/react";
import { Icon } from "./icons";
import { useMenu } from "./menu";
import type { Theme } from "~/web/theme.server";
import { initialsOf } from "~/lib/initials";
import { MAX_QUERY_LENGTH } from "~/lib/keywords-query";
import { searchPath } from "~/lib/search-routes";
import { Logo } from "./logo";

/** The project or board in view: its name, and the project the header's actions work on. */
export interface HeaderContext {
  title: string;
  projectId: number;
  projectName: string;
  /** The project's logo (the circle shows its initials without one). */
  projectLogo: string | null;
  kind: "project" | "board";
  /** What the actor may do here: a viewer sees no upload, edit or create icons. */
  can: { edit: boolean; manage: boolean };
  /** The edit dialog of the project (managers) or board (editors), when the person may use it. */
  editTo: string | null;
  /** The board's Share page (editors), when the page is a board's. */
  shareTo: string | null;
}

export interface HeaderProps {
  user: { name: string; surname: string; email: string; role: "user" | "admin" };
  theme: Theme;
  context: HeaderContext | null;
}

/**
 * The signed-in header. The profile menu is a <details> disclosure (see menu.tsx). The project or board in view
 * names itself and offers what the person may do there: edit (managers for a project, editors for a board),
 * share a board, upload and create a board (editors).
 */
export function Header({ user, theme, context }: HeaderProps) {
  const location = useLocation();
  const here = location.pathname + location.search;
  const menu = useMenu({ closeOn: location.key });

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
            {context.can.edit ? (
              <nav aria-label={`${context.kind === "project" ? "Project" : "Board"} actions`} className="header-icons">
                {context.editTo ? (
                  <Link to={context.editTo} title={`Edit ${context.kind}`} aria-label={`Edit ${context.kind}`}>
                    <Icon name="edit" />
                  </Link>
                ) : null}
                {context.shareTo ? (
                  <Link to={context.shareTo} title="Share board" aria-label="Share board">
                    <Icon name="share" />
                  </Link>
                ) : null}
                <Link to={`/upload/${context.projectId}`} title="Upload images" aria-label="Upload images">
                  <Icon name="upload" />
                </Link>
                <Link to={`/client/${context.projectId}/boards/new`} title="Create board" aria-label="Create board">
                  <Icon name="plus" />
                </Link>
              </nav>
            ) : null}
          </>
        ) : null}
      </div>
      <HeaderSearch />
      <nav aria-label="Account" className="header-actions">
        <Link
          to="/all-clients"
          className="project-logo"
          aria-label={context ? `${initialsOf(context.projectName)}: all projects` : "All projects"}
          title="All projects"
        >
          {context?.projectLogo ? (
            <img src={context.projectLogo} alt="" />
          ) : context ? (
            initialsOf(context.projectName)
          ) : (
            <span aria-hidden="true">▦</span>
          )}
        </Link>
        <details className="profile-menu" ref={menu}>
          <summary aria-label={`${initials}: profile menu for ${user.name} ${user.surname}`}>
            <span className="avatar">{initials}</span>
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
                <Link to="/profile">Profile Settings</Link>
              </li>
              {user.role === "admin" ? (
                <li>
                  <Link to="/admin">Admin</Link>
                </li>
              ) : null}
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

/**
 * Search across every project of the person, by keywords or smart (a phrase that becomes tags). Without JavaScript
 * a plain GET to /search (which sends on to the spec's /search/:searchType/:searchTags); with it, straight there,
 * so the progress screen shows while it loads.
 */
function HeaderSearch() {
  const navigate = useNavigate();
  return (
    <form
      method="get"
      action="/search"
      role="search"
      aria-label="All projects"
      className="header-search"
      onSubmit={(event) => {
        const form = new FormData(event.currentTarget);
        const q = String(form.get("q") ?? "").trim();
        event.preventDefault();
        if (q) navigate(searchPath(form.get("type") === "smart" ? "smart" : "keyword", q));
      }}
    >
      <label htmlFor="header-search-q" className="sr-only">
        Search all projects
      </label>
      <input
        id="header-search-q"
        type="search"
        name="q"
        placeholder="Search all projects"
        maxLength={MAX_QUERY_LENGTH}
        required
        pattern=".*\S.*"
        title="Type a word to search for"
      />
      <label htmlFor="header-search-type" className="sr-only">
        Search type
      </label>
      <select id="header-search-type" name="type" defaultValue="keyword">
        <option value="keyword">Keywords</option>
        <option value="smart">Smart</option>
      </select>
      <button type="submit" className="btn">
        Search
      </button>
    </form>
  );
}
