import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData, useNavigate, useNavigation } from "@remix-run/react";
import { useEffect, useRef } from "react";
import { z } from "zod";
import { BoardCard } from "~/components/cards";
import { searchBoards } from "~/models/boards.server";
import { withCoverUrls } from "~/web/media-links.server";
import { listProjects } from "~/models/projects.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "All Boards | Koala" }];

/** The spec's paging: 12 boards first, 4 more per step. The count lives in the URL, so the page works without JavaScript. */
export const FIRST = 12;
export const STEP = 4;
const Query = z.object({
  q: z.string().max(64).optional().catch(undefined),
  project: z.coerce.number().int().positive().optional().catch(undefined),
  count: z.coerce.number().int().min(FIRST).max(2000).optional().catch(undefined),
});

export async function loader({ request, context }: LoaderFunctionArgs) {
  const actor = await requireActor(request, context);
  const params = Query.parse(Object.fromEntries(new URL(request.url).searchParams));
  const count = params.count ?? FIRST;
  const [projects, result] = await Promise.all([
    listProjects(actor),
    searchBoards(actor, { q: params.q, projectId: params.project, limit: count }),
  ]);
  return {
    ...result,
    boards: withCoverUrls(result.boards),
    projects: projects.map((p) => ({ id: p.id, name: p.name })),
    q: params.q ?? "",
    project: params.project ?? null,
    count,
  };
}

export default function AllBoards() {
  const { boards, more, projects, q, project, count } = useLoaderData<typeof loader>();
  const filtered = Boolean(q || project);
  const nextParams = new URLSearchParams();
  if (q) nextParams.set("q", q);
  if (project) nextParams.set("project", String(project));
  nextParams.set("count", String(count + STEP));
  const showMore = `?${nextParams}`;
  return (
    <div>
      <h1>All boards</h1>
      <Form method="get" className="filter-bar" role="search">
        <span className="inline-field">
          <label htmlFor="board-q">Search boards</label>
          <input id="board-q" name="q" type="search" defaultValue={q} maxLength={64} />
        </span>
        <span className="inline-field">
          <label htmlFor="board-project">Project</label>
          <select id="board-project" name="project" defaultValue={project ?? ""}>
            <option value="">All projects</option>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </span>
        <button type="submit" className="btn">
          Search
        </button>
      </Form>
      {boards.length === 0 ? (
        <p className="empty">{filtered ? "No related boards found" : "No boards found"}</p>
      ) : (
        <ul className="cards layout-grid" aria-label="Boards">
          {boards.map((b) => (
            <li key={b.id}>
              <BoardCard board={b} />
            </li>
          ))}
        </ul>
      )}
      {more ? <ShowMore to={showMore} waitForScroll={count === FIRST} /> : null}
    </div>
  );
}

/**
 * 'Show more' without JavaScript; with it, the same link is followed by itself when it is in view. The first 12 wait
 * for the person to scroll it into view: the observer's first report is where the link already is, and a link in
 * view as the page is shown (a tall window) loaded a step at once, so the spec's first 12 were 16. After a step it
 * keeps loading while in view (the new cards may not push it out).
 */
function ShowMore({ to, waitForScroll }: { to: string; waitForScroll: boolean }) {
  const ref = useRef<HTMLAnchorElement>(null);
  const navigate = useNavigate();
  const busy = useNavigation().state !== "idle";
  useEffect(() => {
    const el = ref.current;
    if (!el || busy) return;
    let first = waitForScroll;
    const observer = new IntersectionObserver((entries) => {
      const arrived = !first && entries.some((e) => e.isIntersecting);
      first = false;
      if (arrived) navigate(to, { replace: true, preventScrollReset: true });
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [to, busy, navigate, waitForScroll]);
  return (
    <p className="show-more">
      <Link ref={ref} to={to} preventScrollReset replace className="btn">
        Show more
      </Link>
    </p>
  );
}
