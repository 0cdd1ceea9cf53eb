import { getFormProps, type SubmissionResult } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { CodeInput } from "~/components/code-input";
import { Field, FieldShell, FormError, SubmitButton, usePending, useSchemaForm, IntentButton } from "~/components/forms";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { PersonFields } from "~/components/person-fields";
import { PASSWORD_MESSAGES, PasswordSchema, ProfileSchema, TotpCodeSchema, type ProfileInput } from "~/lib/account-schemas";
import { CODE_REPLY } from "~/lib/schemas";
import { isCommonPassword } from "~/lib/common-passwords.server";
import { InvalidError } from "~/lib/errors";
import { page, readForm, redirectWithToast, refused } from "~/web/http.server";
import { resultOf } from "~/lib/form-answer";
import { changePassword, profileOf, removeTotp, signOutOtherSessions, updateProfile } from "~/models/profile.server";
import { choiceOptions, NotOnListError } from "~/models/reference.server";
import { liveSessions } from "~/models/sessions.server";
import { config } from "~/config.server";
import { currentSessionId, requireActor } from "~/sessions.server";
import { DataTable } from "~/components/data-table";

export const meta: MetaFunction = () => [{ title: "Profile Settings | Koala" }];

/** Profile settings (spec 2): the person's details, then Security: password, TOTP, sessions. */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await requireActor(request, context);
  const [profile, options, sessions] = await Promise.all([
    profileOf(actor),
    choiceOptions(),
    liveSessions(actor.id, await currentSessionId(request), { idleMs: config().sessionIdleMs, maxMs: config().sessionMaxMs }),
  ]);
  return { profile, options, sessions };
});

type Intent = "profile" | "password" | "totp-remove" | "sessions";

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await requireActor(request, context);
  const form = await readForm(request);
  const intent = String(form.get("intent") ?? "") as Intent;

  if (intent === "profile") {
    const submission = parseWithZod(form, { schema: ProfileSchema });
    if (submission.status !== "success") return refused(intent, submission.reply());
    try {
      await updateProfile(actor, submission.value as ProfileInput);
    } catch (err) {
      if (!(err instanceof NotOnListError)) throw err;
      return refused(intent, submission.reply({ fieldErrors: { [err.field]: [err.message] } }));
    }
    return redirectWithToast(request, "/profile", { kind: "success", title: "Profile saved" });
  }
  if (intent === "password") {
    const submission = parseWithZod(form, { schema: PasswordSchema });
    const hide = { hideFields: ["current", "password", "confirm"] };
    if (submission.status !== "success") return refused(intent, submission.reply(hide));
    const { current, password } = submission.value;
    if (await isCommonPassword(password))
      return refused(intent, submission.reply({ ...hide, fieldErrors: { password: [PASSWORD_MESSAGES.common] } }));
    if (!(await changePassword(actor, current, password, await currentSessionId(request))))
      return refused(intent, submission.reply({ ...hide, fieldErrors: { current: [PASSWORD_MESSAGES.wrongCurrent] } }));
    return redirectWithToast(request, "/profile", {
      kind: "success",
      title: "Password changed",
      description: "Your other sessions were signed out.",
    });
  }
  if (intent === "totp-remove") {
    const submission = parseWithZod(form, { schema: TotpCodeSchema });
    if (submission.status !== "success") return refused(intent, submission.reply(CODE_REPLY));
    if (!(await removeTotp(actor, submission.value.code)))
      return refused(intent, submission.reply({ ...CODE_REPLY, fieldErrors: { code: ["Invalid credentials."] } }));
    return redirectWithToast(request, "/profile", { kind: "success", title: "Two-factor authentication removed" });
  }
  if (intent === "sessions") {
    const current = await currentSessionId(request);
    if (!current) throw new InvalidError("No session");
    const n = await signOutOtherSessions(actor, current);
    return redirectWithToast(request, "/profile", { kind: "success", title: `Signed out of ${n} other session${n === 1 ? "" : "s"}` });
  }
  throw new InvalidError("Unknown action");
});

export default function Profile() {
  const { profile, options, sessions } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <div className="settings-page">
      <h1>Profile Settings</h1>
      <ProfileForm profile={profile} options={options} lastResult={resultOf(answer, "profile")} />
      <section aria-labelledby="security-heading">
        <h2 id="security-heading">Security</h2>
        <PasswordForm hasPassword={profile.hasPassword} lastResult={resultOf(answer, "password")} />
        <h3>Two-factor authentication (TOTP)</h3>
        {profile.totpEnrolled ? (
          <RemoveTotpForm lastResult={resultOf(answer, "totp-remove")} />
        ) : (
          <p>
            Not set up. <Link to="/profile/totp">Set up two-factor authentication</Link>
          </p>
        )}
        <Sessions sessions={sessions} />
        <h3>Access tokens</h3>
        <p>
          Scripts and other programs use the Koala API with a token you make. <Link to="/profile/tokens">Manage access tokens</Link>
        </p>
      </section>
    </div>
  );
}

type ProfileData = ReturnType<typeof useLoaderData<typeof loader>>["profile"];

function ProfileForm({
  profile,
  options,
  lastResult,
}: {
  profile: ProfileData;
  options: Parameters<typeof PersonFields>[0]["options"];
  lastResult?: SubmissionResult<string[]>;
}) {
  const pending = usePending("/profile");
  const [form, fields] = useSchemaForm(ProfileSchema, {
    id: "profile",
    lastResult,
    defaultValue: {
      name: profile.name,
      surname: profile.surname,
      mobile: profile.mobile ?? "",
      country: profile.country_code ?? "",
      timezone: profile.timezone_id === null ? "" : String(profile.timezone_id),
      language: profile.language_code ?? "",
      org_unit: profile.orgUnit ?? "",
    },
  });
  return (
    <Form method="post" {...getFormProps(form)} aria-labelledby="details-heading">
      <h2 id="details-heading">Your details</h2>
      <FormError id={form.errorId} errors={form.errors} />
      <dl className="summary-list">
        <div>
          <dt>Email</dt>
          <dd>{profile.email}</dd>
        </div>
        <div>
          <dt>Role</dt>
          <dd>{profile.role === "admin" ? "Administrator" : "User"}</dd>
        </div>
        <div>
          <dt>Projects</dt>
          <dd>{profile.projects.length ? profile.projects.map((p) => `${p.name} (${p.role})`).join(", ") : "None"}</dd>
        </div>
      </dl>
      <input type="hidden" name="intent" value="profile" />
      <PersonFields fields={fields} options={options} />
      <SubmitButton pending={pending} pendingText="Saving…">
        Save
      </SubmitButton>
    </Form>
  );
}

function PasswordForm({ hasPassword, lastResult }: { hasPassword: boolean; lastResult?: SubmissionResult<string[]> }) {
  const pending = usePending("/profile");
  const [form, fields] = useSchemaForm(PasswordSchema, { id: "password", lastResult });
  return (
    <Form method="post" {...getFormProps(form)} aria-labelledby="password-heading">
      <h3 id="password-heading">{hasPassword ? "Change password" : "Set a password"}</h3>
      <p className="muted">At least 12 characters; common passwords are refused. Your other sessions end when it changes.</p>
      <input type="hidden" name="intent" value="password" />
      <input type="hidden" name="hasPassword" value={hasPassword ? "yes" : "no"} />
      {hasPassword ? (
        <Field label="Current password" field={fields.current} type="password" inputProps={{ autoComplete: "current-password" }} />
      ) : null}
      <Field label="New password" field={fields.password} type="password" inputProps={{ autoComplete: "new-password" }} />
      <Field label="Repeat the new password" field={fields.confirm} type="password" inputProps={{ autoComplete: "new-password" }} />
      <SubmitButton pending={pending} pendingText="Saving…">
        {hasPassword ? "Change password" : "Set password"}
      </SubmitButton>
    </Form>
  );
}

function RemoveTotpForm({ lastResult }: { lastResult?: SubmissionResult<string[]> }) {
  const pending = usePending("/profile");
  const [form, fields] = useSchemaForm(TotpCodeSchema, { id: "totp-remove", lastResult });
  return (
    <Form method="post" {...getFormProps(form)}>
      <p>On: sign-in asks for a code from your authenticator app. To turn it off, give a current code.</p>
      <input type="hidden" name="intent" value="totp-remove" />
      <FieldShell label="Code" field={fields.code}>
        <CodeInput field={fields.code} />
      </FieldShell>
      <SubmitButton pending={pending} pendingText="Checking…" className="btn">
        Remove two-factor authentication
      </SubmitButton>
    </Form>
  );
}

function Sessions({ sessions }: { sessions: ReturnType<typeof useLoaderData<typeof loader>>["sessions"] }) {
  const time = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 16) + " UTC";
  return (
    <>
      <h3 id="sessions-heading">Active sessions</h3>
      <DataTable columns={["Device", "Address", "Signed in", "Last seen"]} labelledBy="sessions-heading">
        {sessions.map((s) => (
          <tr key={s.key}>
            <td>
              {s.userAgent ?? "Unknown device"}
              {s.current ? <strong> (this device)</strong> : null}
            </td>
            <td>{s.ip ?? "unknown"}</td>
            <td>{time(s.createdAt)}</td>
            <td>{time(s.lastSeenAt)}</td>
          </tr>
        ))}
      </DataTable>
      <IntentButton intent="sessions" disabled={sessions.length < 2}>
        Sign out other sessions
      </IntentButton>
    </>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
