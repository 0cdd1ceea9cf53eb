import type { LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { adminActor, noPosts } from "~/routes/_app+/admin+/admin.server";
import { parseId } from "~/models/scope.server";
import { page } from "~/web/http.server";
import { AUDIT_ACTIONS } from "~/lib/audit-actions";
import { auditPage } from "~/models/audit.server";
import { DataTable } from "~/components/data-table";

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The audit log: who did what and when, filtered by user, action and days (GET: bookmarkable), newest first. */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await adminActor(request, context);
  const url = new URL(request.url);
  const get = (k: string) => (url.searchParams.get(k) ?? "").trim().slice(0, 200);
  const filter = {
    user: get("user"),
    action: (AUDIT_ACTIONS as readonly string[]).includes(get("action")) ? get("action") : "",
    from: DAY.test(get("from")) ? get("from") : "",
    to: DAY.test(get("to")) ? get("to") : "",
  };
  const { rows, next } = await auditPage(actor, filter, parseId(url.searchParams.get("before")) ?? undefined);
  return { filter, rows, next };
});

/** Nothing to post here: 404 to a non-admin like every console page, 405 to an admin. */
export const action = noPosts;

export default function Audit() {
  const { filter, rows, next } = useLoaderData<typeof loader>();
  const nextQuery = next ? new URLSearchParams({ ...filter, before: String(next) }) : null;
  return (
    <section aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit log</h2>
      <Form method="get" className="inline-form" aria-label="Filter the audit log">
        <span className="inline-field">
          <label htmlFor="audit-user">User (e-mail)</label>
          <input id="audit-user" name="user" type="search" defaultValue={filter.user} maxLength={200} />
        </span>
        <span className="inline-field">
          <label htmlFor="audit-action">Action</label>
          <select id="audit-action" name="action" defaultValue={filter.action}>
            <option value="">Any</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </span>
        <span className="inline-field">
          <label htmlFor="audit-from">From</label>
          <input id="audit-from" name="from" type="date" defaultValue={filter.from} />
        </span>
        <span className="inline-field">
          <label htmlFor="audit-to">To</label>
          <input id="audit-to" name="to" type="date" defaultValue={filter.to} />
        </span>
        <button type="submit" className="btn">
          Filter
        </button>
      </Form>
      {rows.length === 0 ? (
        <p>No entries found</p>
      ) : (
        <DataTable columns={["When (UTC)", "Who", "Action", "Subject", "Address", "Detail"]} labelledBy="audit-heading">
          {rows.map((r) => (
            <tr key={r.id}>
              <td>{new Date(r.at).toISOString().replace("T", " ").slice(0, 19)}</td>
              <td>{r.email ?? "—"}</td>
              <td>{r.action}</td>
              <td>{r.subject ?? ""}</td>
              <td>{r.ip ?? ""}</td>
              <td>
                <code>{r.detail === "{}" ? "" : r.detail}</code>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {nextQuery ? <Link to={`/admin/audit?${nextQuery}`}>Older entries</Link> : null}
    </section>
  );
}
