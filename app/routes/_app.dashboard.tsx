import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { BoardCard, ProjectCard } from "~/components/cards";
import { TermsDialog } from "~/components/terms-dialog";
import { searchBoards } from "~/models/boards.server";
import { listProjects } from "~/models/projects.server";
import { acknowledgeTerms } from "~/models/users.server";
import { actorOf, preferenceCookie, readPreference, requestMeta, requireUser, signOut } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Dashboard | Koala" }];

export const VIEWS = ["clients", "boards"] as const;
export const LAYOUTS = ["carousel", "grid", "list"] as const;

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const actor = actorOf(user);
  const view = readPreference(request, "selectedView", VIEWS, "clients");
  const layout = readPreference(request, "viewLayout", LAYOUTS, "carousel");
  const [projects, boards] = await Promise.all([
    view === "clients" ? listProjects(actor) : Promise.resolve([]),
    view === "boards" ? searchBoards(actor, { limit: 60 }).then((r) => r.boards) : Promise.resolve([]),
  ]);
  return { view, layout, projects, boards, termsAcknowledged: user.terms_acknowledged_at !== null };
}

const DashboardAction = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("view"), value: z.enum(VIEWS) }),
  z.object({ intent: z.literal("layout"), value: z.enum(LAYOUTS) }),
  z.object({ intent: z.literal("terms"), value: z.enum(["yes", "no"]) }),
]);

export async function action({ request, context }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const parsed = DashboardAction.safeParse(Object.fromEntries(await request.formData()));
  if (!parsed.success) throw redirect("/dashboard");
  const { intent, value } = parsed.data;
  if (intent === "terms") {
    if (value === "no") return signOut(request, requestMeta(request, context));
    await acknowledgeTerms(actorOf(user));
    return redirect("/dashboard");
  }
  return redirect("/dashboard", {
    headers: { "Set-Cookie": preferenceCookie(intent === "view" ? "selectedView" : "viewLayout", value) },
  });
}

const LAYOUT_LABELS = { carousel: "Carousel", grid: "Grid", list: "List" } as const;

export default function Dashboard() {
  const { view, layout, projects, boards, termsAcknowledged } = useLoaderData<typeof loader>();
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
                  <ProjectCard id={p.id} name={p.name} />
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
      {termsAcknowledged ? null : <TermsDialog />}
    </div>
  );
}
