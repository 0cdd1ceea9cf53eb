import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { BoardCard, ProjectCard } from "~/components/cards";
import { page, readForm } from "~/web/http.server";
import { searchBoards } from "~/models/boards.server";
import { withCoverUrls } from "~/web/media-links.server";
import { listProjects } from "~/models/projects.server";
import { requireActor } from "~/sessions.server";
import { preference } from "~/web/cookies.server";

export const meta: MetaFunction = () => [{ title: "Dashboard | Koala" }];

export const VIEWS = ["clients", "boards"] as const;
export const LAYOUTS = ["carousel", "grid", "list"] as const;
const selectedView = preference("selectedView", VIEWS, "clients");
const viewLayout = preference("viewLayout", LAYOUTS, "carousel");

export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await requireActor(request, context);
  const view = selectedView.read(request);
  const layout = viewLayout.read(request);
  const [projects, boards] = await Promise.all([
    view === "clients" ? listProjects(actor) : Promise.resolve([]),
    view === "boards" ? searchBoards(actor, { limit: 60 }).then((r) => withCoverUrls(r.boards)) : Promise.resolve([]),
  ]);
  return { view, layout, projects, boards };
});

const DashboardAction = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("view"), value: z.enum(VIEWS) }),
  z.object({ intent: z.literal("layout"), value: z.enum(LAYOUTS) }),
]);

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  await requireActor(request, context);
  const parsed = DashboardAction.safeParse(Object.fromEntries(await readForm(request)));
  if (!parsed.success) throw redirect("/dashboard");
  const { intent, value } = parsed.data;
  const cookie =
    intent === "view" ? selectedView.serialize(value as (typeof VIEWS)[number]) : viewLayout.serialize(value as (typeof LAYOUTS)[number]);
  return redirect("/dashboard", { headers: { "Set-Cookie": cookie } });
});

const LAYOUT_LABELS = { carousel: "Carousel", grid: "Grid", list: "List" } as const;

export default function Dashboard() {
  const { view, layout, projects, boards } = useLoaderData<typeof loader>();
  return (
    <div className="dashboard">
      <div className="dashboard-bar">
        <h1>Dashboard</h1>
        <Form method="post" className="segmented" aria-label="Show">
          <input type="hidden" name="intent" value="view" />
          <button type="submit" name="value" value="clients" aria-pressed={view === "clients"}>
            Projects
          </button>
          <button type="submit" name="value" value="boards" aria-pressed={view === "boards"}>
            Boards
          </button>
        </Form>
        <Form method="post" className="segmented" aria-label="Layout">
          <input type="hidden" name="intent" value="layout" />
          {(Object.keys(LAYOUT_LABELS) as (keyof typeof LAYOUT_LABELS)[]).map((l) => (
            <button key={l} type="submit" name="value" value={l} aria-pressed={layout === l}>
              {LAYOUT_LABELS[l]}
            </button>
          ))}
        </Form>
      </div>
      <section aria-label={view === "clients" ? "Projects" : "Boards"}>
        {view === "clients" ? (
          projects.length === 0 ? (
            <p className="empty">No projects were found</p>
          ) : (
            <ul className={`cards layout-${layout}`}>
              {projects.map((p) => (
                <li key={p.id}>
                  <ProjectCard id={p.id} name={p.name} logoKey={p.logo_key} />
                </li>
              ))}
            </ul>
          )
        ) : boards.length === 0 ? (
          <p className="empty">No boards were found</p>
        ) : (
          <ul className={`cards layout-${layout}`}>
            {boards.map((b) => (
              <li key={b.id}>
                <BoardCard board={b} />
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
