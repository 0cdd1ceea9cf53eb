import { getFormProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { Field, FormError, SubmitButton, TextareaField, usePending, useSchemaForm } from "~/components/forms";
import { config } from "~/config.server";
import { getErrorMessage } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast, refused } from "~/web/http.server";
import { resultOf } from "~/lib/form-answer";
import { log } from "~/lib/log.server";
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, SHARE_MESSAGES, ShareByEmailSchema, ShareLinkSchema, type ExpiryChoice } from "~/lib/schemas";
import { parseId } from "~/models/scope.server";
import { createShareLinks, extendShareLink, listShareLinks, revokeShareLink } from "~/models/share-links.server";
import { flushViews } from "~/services/share-views.server";
import { shareBoardByEmail } from "~/services/sharing.server";
import { boardScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Share ${data?.board.title ?? "board"} | Koala` }];

/** Share a board: by e-mail (one link per person), or a link to paste; and the board's links, to revoke or extend. */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { need: "write" });
  await flushViews(); // the views this process counted so far, so that the team sees every one
  return {
    board: { id: scope.board.id, title: scope.board.title, projectId: scope.project.id, clientBoard: scope.board.clientBoard },
    links: await listShareLinks(scope),
    now: Date.now(),
    header: headerOf(scope),
  };
});

const LinkAction = z.object({ intent: z.enum(["revoke", "extend"]), link: z.string(), expiry: z.enum(EXPIRY_CHOICES).optional() });

const options = (v: { expiry: ExpiryChoice; allowDownload?: "on"; showMetadata?: "on" }) => ({
  expiry: v.expiry,
  allowDownload: v.allowDownload === "on",
  showMetadata: v.showMetadata === "on",
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { need: "write" });
  const form = await readForm(request);
  const back = `/${scope.project.id}/board/${scope.board.id}/share`;
  const intent = form.get("intent");
  if (intent === "email") {
    const submission = parseWithZod(form, { schema: ShareByEmailSchema });
    if (submission.status !== "success") return refused(intent, submission.reply());
    try {
      const links = await shareBoardByEmail(scope, submission.value.emails, options(submission.value));
      return redirectWithToast(request, back, {
        kind: "success",
        title: `Board shared with ${links.length} ${links.length === 1 ? "person" : "people"}`,
      });
    } catch (err) {
      log.error("share failed", { error: getErrorMessage(err) });
      return refused(intent, submission.reply({ formErrors: [`${SHARE_MESSAGES.failed}: ${SHARE_MESSAGES.failedLong}`] }), 500);
    }
  }
  if (intent === "link") {
    const submission = parseWithZod(form, { schema: ShareLinkSchema });
    if (submission.status !== "success") return refused(intent, submission.reply());
    const [made] = await createShareLinks(scope, [null], options(submission.value), submission.value.label);
    // The token exists only now: the link is shown once, on this answer, and never stored in a readable form.
    return {
      intent,
      result: submission.reply({ resetForm: true }),
      made: { url: `${config().appUrl}${made!.path}`, label: submission.value.label },
    };
  }
  const parsed = LinkAction.safeParse(Object.fromEntries(form));
  const linkId = parsed.success ? parseId(parsed.data.link) : null;
  if (!parsed.success || !linkId) return redirectWithToast(request, back, { kind: "error", title: "Data format error" });
  if (parsed.data.intent === "revoke") {
    await revokeShareLink(scope, linkId);
    return redirectWithToast(request, back, { kind: "success", title: "Link revoked", description: "It stops working at once." });
  }
  await extendShareLink(scope, linkId, parsed.data.expiry ?? DEFAULT_EXPIRY);
  return redirectWithToast(request, back, { kind: "success", title: "Link extended" });
});

const EXPIRY_LABELS: Record<ExpiryChoice, string> = { "7": "7 days", "30": "30 days", "90": "90 days", never: "Never" };
const day = (at: number | null) => (at === null ? "—" : new Date(at).toISOString().slice(0, 10));

function Options() {
  return (
    <fieldset className="share-options">
      <legend>Options</legend>
      <label>
        Expires after{" "}
        <select name="expiry" defaultValue={DEFAULT_EXPIRY}>
          {EXPIRY_CHOICES.map((c) => (
            <option key={c} value={c}>
              {EXPIRY_LABELS[c]}
            </option>
          ))}
        </select>
      </label>
      <label className="check">
        <input type="checkbox" name="allowDownload" defaultChecked /> Allow downloads
      </label>
      <label className="check">
        <input type="checkbox" name="showMetadata" defaultChecked /> Show metadata (title, keywords, attributes)
      </label>
    </fieldset>
  );
}

export default function ShareBoard() {
  const { board, links, now } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const made = answer && "made" in answer ? answer.made : null;
  const pending = usePending();
  const [emailForm, emailFields] = useSchemaForm(ShareByEmailSchema, { id: "share-email", lastResult: resultOf(answer, "email") });
  const [linkForm, linkFields] = useSchemaForm(ShareLinkSchema, { id: "share-link", lastResult: resultOf(answer, "link") });
  return (
    <section className="share-page" aria-labelledby="share-heading">
      <p>
        <Link to={`/${board.projectId}/board/${board.id}`}>← {board.title}</Link>
      </p>
      <h1 id="share-heading">Share “{board.title}”</h1>
      <p className="muted">
        People you share with open the board read-only, without an account or JavaScript; each gets a link of their own, which you can
        revoke.
      </p>

      <h2>By e-mail</h2>
      <Form method="post" {...getFormProps(emailForm)}>
        <input type="hidden" name="intent" value="email" />
        <FormError id={emailForm.errorId} errors={emailForm.errors} />
        <TextareaField
          label="E-mail addresses"
          field={emailFields.emails}
          hint="One address, or several separated by commas."
          textareaProps={{ rows: 2, autoComplete: "off" }}
        />
        <Options />
        <SubmitButton pending={pending} pendingText="Sharing…">
          Share
        </SubmitButton>
      </Form>

      <h2>A link to paste</h2>
      {made ? (
        <div className="field made-link" role="status">
          <label htmlFor="made-link">Link for “{made.label}” (shown once: copy it now)</label>
          <input id="made-link" readOnly value={made.url} />
        </div>
      ) : null}
      <Form method="post" {...getFormProps(linkForm)}>
        <input type="hidden" name="intent" value="link" />
        <FormError id={linkForm.errorId} errors={linkForm.errors} />
        <Field
          label="What the link is for"
          field={linkFields.label}
          hint="For example: “Q3 report, client deck”."
          inputProps={{ maxLength: 80 }}
        />
        <Options />
        <SubmitButton pending={pending} pendingText="Creating…">
          Create a link
        </SubmitButton>
      </Form>

      <h2>Links of this board</h2>
      {links.length === 0 ? (
        <p className="empty">No links yet.</p>
      ) : (
        <div className="table-scroll">
          <table className="links-table">
            <thead>
              <tr>
                <th scope="col">For</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last opened</th>
                <th scope="col">Views</th>
                <th scope="col">Downloads</th>
                <th scope="col">Reviews</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {links.map((l) => {
                const state = l.revokedAt ? "Revoked" : l.expiresAt !== null && l.expiresAt <= now ? "Expired" : null;
                return (
                  <tr key={l.id}>
                    <th scope="row">
                      {l.recipient ?? l.label}
                      {state ? <span className="muted"> ({state})</span> : null}
                    </th>
                    <td>
                      {day(l.createdAt)}
                      {l.createdBy ? ` by ${l.createdBy}` : ""}
                    </td>
                    <td>{l.expiresAt === null ? "Never" : day(l.expiresAt)}</td>
                    <td>{day(l.lastOpenedAt)}</td>
                    <td>{l.views}</td>
                    <td>{l.downloads}</td>
                    <td>{l.reviews}</td>
                    <td>
                      {l.revokedAt ? null : (
                        <div className="link-actions">
                          <Form method="post">
                            <input type="hidden" name="link" value={l.id} />
                            <button
                              type="submit"
                              name="intent"
                              value="revoke"
                              className="btn btn-danger"
                              aria-label={`Revoke the link for ${l.recipient ?? l.label}`}
                            >
                              Revoke
                            </button>
                          </Form>
                          <Form method="post" className="inline-form">
                            <input type="hidden" name="link" value={l.id} />
                            <input type="hidden" name="expiry" value="30" />
                            <button
                              type="submit"
                              name="intent"
                              value="extend"
                              className="btn"
                              aria-label={`Extend the link for ${l.recipient ?? l.label} by 30 days`}
                            >
                              Extend 30 days
                            </button>
                          </Form>
                        </div>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
