import { getFormProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { Field, FieldShell, FormError, SubmitButton, usePending, useSchemaForm } from "~/components/forms";
import { TokenTable } from "~/components/token-table";
import { config } from "~/config.server";
import { ApiTokenSchema, TOKEN_DAYS } from "~/lib/account-schemas";
import { ConflictError, InvalidError } from "~/lib/errors";
import { resultOf } from "~/lib/form-answer";
import { parseId } from "~/lib/ids";
import { createToken, myTokens, revokeToken } from "~/models/api-tokens.server";
import { listProjects } from "~/models/projects.server";
import { requireActor } from "~/sessions.server";
import { page, readForm, redirectWithToast, refused } from "~/web/http.server";

export const meta: MetaFunction = () => [{ title: "Access tokens | Koala" }];

/**
 * Personal access tokens for the public API (docs/api.md): made here, shown once, listed with their last use, and
 * revoked here. A token does what its owner may, narrowed to reading and to some projects if chosen.
 */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await requireActor(request, context);
  const [tokens, projects] = await Promise.all([myTokens(actor), listProjects(actor)]);
  return { tokens, projects: projects.map((p) => ({ id: p.id, name: p.name })), now: Date.now() };
});

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await requireActor(request, context);
  const form = await readForm(request);
  const intent = form.get("intent");
  if (intent === "create") {
    const submission = parseWithZod(form, { schema: ApiTokenSchema });
    if (submission.status !== "success") return refused(intent, submission.reply());
    const v = submission.value;
    try {
      const { secret } = await createToken(actor, {
        name: v.name!,
        write: v.access === "write",
        projects: v.reach === "some" ? (v.projects ?? []) : null,
        days: Number(v.days),
      });
      // The secret exists only now: shown once, on this answer; the database keeps its hash.
      return { intent, result: submission.reply({ resetForm: true }), made: { name: v.name!, secret, base: `${config().appUrl}/api/v1` } };
    } catch (err) {
      if (err instanceof ConflictError) return refused(intent, submission.reply({ formErrors: [err.message] }));
      if (!(err instanceof InvalidError)) throw err;
      return refused(intent, submission.reply({ fieldErrors: { projects: [err.message] } }));
    }
  }
  if (intent === "revoke") {
    const id = parseId(form.get("token"));
    if (!id) throw new InvalidError();
    await revokeToken(actor, id);
    return redirectWithToast(request, "/profile/tokens", {
      kind: "success",
      title: "Token revoked",
      description: "It stops working at once.",
    });
  }
  throw new InvalidError("Unknown action");
});

const DAY_LABELS: Record<(typeof TOKEN_DAYS)[number], string> = { "7": "7 days", "30": "30 days", "90": "90 days", "365": "1 year" };

export default function AccessTokens() {
  const { tokens, projects, now } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const made = answer && "made" in answer ? answer.made : null;
  return (
    <div className="settings-page">
      <p>
        <Link to="/profile">← Profile Settings</Link>
      </p>
      <h1>Access tokens</h1>
      <p>
        A token lets a script use the <a href="/api/docs">Koala API</a> as you: it can do what you can, or less. Keep it secret, like a
        password.
      </p>
      {made ? (
        <div className="field made-link" role="status">
          <label htmlFor="made-token">Token “{made.name}” (shown once: copy it now)</label>
          <input id="made-token" readOnly value={made.secret} />
          <p className="muted field-hint">
            Send it as <code>Authorization: Bearer …</code> to <code>{made.base}</code>.
          </p>
        </div>
      ) : null}
      <NewTokenForm projects={projects} answer={answer} />
      <h2 id="tokens-heading">Your tokens</h2>
      {tokens.length === 0 ? <p className="empty">No tokens yet.</p> : <TokenTable tokens={tokens} now={now} labelledBy="tokens-heading" />}
    </div>
  );
}

function NewTokenForm({
  projects,
  answer,
}: {
  projects: { id: number; name: string }[];
  answer: ReturnType<typeof useActionData<typeof action>>;
}) {
  const pending = usePending("/profile/tokens");
  const [form, fields] = useSchemaForm(ApiTokenSchema, {
    id: "new-token",
    lastResult: resultOf(answer, "create"),
    defaultValue: { access: "read", reach: "all", days: "30" },
  });
  // The projects ticked before a refused submit stay ticked (without JavaScript the page comes back from the server).
  const chosen = [fields.projects.initialValue ?? []].flat().map(String);
  return (
    <Form method="post" {...getFormProps(form)} aria-labelledby="new-token-heading">
      <h2 id="new-token-heading">New token</h2>
      <input type="hidden" name="intent" value="create" />
      <FormError id={form.errorId} errors={form.errors} />
      <Field label="Name" field={fields.name} hint="What it is for, for example “Field app upload”." inputProps={{ maxLength: 60 }} />
      <fieldset>
        <legend>Access</legend>
        <label className="check">
          <input type="radio" name={fields.access.name} value="read" defaultChecked={fields.access.initialValue !== "write"} /> Read
        </label>
        <label className="check">
          <input type="radio" name={fields.access.name} value="write" defaultChecked={fields.access.initialValue === "write"} /> Read and
          write (what your role in each project allows)
        </label>
      </fieldset>
      <fieldset aria-describedby={fields.projects.errors?.length ? fields.projects.errorId : undefined}>
        <legend>Projects</legend>
        <label className="check">
          <input type="radio" name={fields.reach.name} value="all" defaultChecked={fields.reach.initialValue !== "some"} /> All my projects,
          also those I join later
        </label>
        <label className="check">
          <input type="radio" name={fields.reach.name} value="some" defaultChecked={fields.reach.initialValue === "some"} /> Only these:
        </label>
        <ul className="check-list">
          {projects.map((p) => (
            <li key={p.id}>
              <label className="check">
                <input type="checkbox" name={fields.projects.name} value={p.id} defaultChecked={chosen.includes(String(p.id))} /> {p.name}
              </label>
            </li>
          ))}
        </ul>
        <p id={fields.projects.errorId} className="field-error">
          {fields.projects.errors?.[0] ?? ""}
        </p>
      </fieldset>
      <FieldShell label="Expires after" field={fields.days}>
        <select id={fields.days.id} name={fields.days.name} defaultValue={fields.days.initialValue ?? "30"}>
          {TOKEN_DAYS.map((d) => (
            <option key={d} value={d}>
              {DAY_LABELS[d]}
            </option>
          ))}
        </select>
      </FieldShell>
      <SubmitButton pending={pending} pendingText="Creating…">
        Create token
      </SubmitButton>
    </Form>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
