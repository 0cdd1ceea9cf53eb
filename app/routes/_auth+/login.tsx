import { getFormProps, type SubmissionResult } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { CodeInput } from "~/components/code-input";
import { Field, FieldShell, FormError, SubmitButton, usePending, useSchemaForm } from "~/components/forms";
import { Logo } from "~/components/logo";
import { CODE_REPLY, MagicLinkSchema, MfaLoginSchema } from "~/lib/schemas";
import { dailyMedia } from "~/models/daily-media.server";
import { requestMagicLink, SignInError, verifyPasswordTotp } from "~/services/auth.server";
import { ssoOnlyProviderFor, ssoProviders } from "~/services/oidc.server";
import { getUser, requestMeta, signIn } from "~/sessions.server";
import { page, readForm, refused } from "~/web/http.server";
import { resultOf } from "~/lib/form-answer";
import { log } from "~/lib/log.server";
import { safeRedirect } from "~/lib/redirect";

export const meta: MetaFunction = () => [{ title: "Login | Koala" }];

export async function loader({ request, context }: LoaderFunctionArgs) {
  const url = new URL(request.url);
  const redirectTo = url.searchParams.get("redirectTo");
  if (await getUser(request, context)) throw redirect(safeRedirect(redirectTo));
  return {
    method: url.searchParams.get("method") === "password" ? ("password" as const) : ("link" as const),
    redirectTo: redirectTo ? safeRedirect(redirectTo) : "",
    background: await dailyMedia(),
    providers: (await ssoProviders()).map((p) => ({ id: p.id, name: p.name })),
  };
}

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const meta = requestMeta(request, context);
  const formData = await readForm(request);

  if (formData.get("intent") === "mfa") {
    const submission = parseWithZod(formData, { schema: MfaLoginSchema });
    const hideFields = ["password", ...CODE_REPLY.hideFields];
    if (submission.status !== "success") return refused("mfa", submission.reply({ hideFields }));
    try {
      const result = await verifyPasswordTotp(submission.value, meta);
      return await signIn(request, meta, result.userId, result.redirectTo, "password_totp");
    } catch (error) {
      const known = error instanceof SignInError;
      if (!known) log.error("password sign-in failed", { error: error instanceof Error ? error.message : String(error) });
      const message = known ? error.message : "An error occurred on the server. Please try again later.";
      return refused("mfa", submission.reply({ formErrors: [message], hideFields }), known ? error.status : 500);
    }
  }

  const submission = parseWithZod(formData, { schema: MagicLinkSchema });
  if (submission.status !== "success") return refused("magic-link", submission.reply());
  // An address of an SSO-only domain goes to its provider, the address as its login hint.
  const provider = await ssoOnlyProviderFor(submission.value.email);
  if (provider) {
    const to = new URLSearchParams({ login_hint: submission.value.email });
    if (submission.value.redirectTo) to.set("redirectTo", safeRedirect(submission.value.redirectTo));
    return redirect(`/auth/sso/${provider.id}?${to}`);
  }
  try {
    await requestMagicLink(submission.value.email, submission.value.redirectTo ?? null, meta);
  } catch (error) {
    const known = error instanceof SignInError;
    if (!known) log.error("magic link request failed", { error: error instanceof Error ? error.message : String(error) });
    const message = known ? error.message : "Server error. Please try again.";
    return refused("magic-link", submission.reply({ formErrors: [message] }), known ? error.status : 500);
  }
  return { intent: "magic-link" as const, result: submission.reply(), sent: submission.value.email };
});

export default function Login() {
  const { method, redirectTo, background, providers } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const sent = answer && "sent" in answer ? answer.sent : null;
  const query = redirectTo ? `&redirectTo=${encodeURIComponent(redirectTo)}` : "";
  return (
    <div className="login-page">
      {background.imageUrl ? <img className="login-bg" src={background.imageUrl} alt="" /> : null}
      {background.videoUrl ? (
        <video className="login-bg" src={background.videoUrl} autoPlay muted loop playsInline aria-hidden="true" />
      ) : null}
      <main className="login-card" aria-labelledby="login-title">
        <Logo />
        <h1 id="login-title">Sign in</h1>
        {sent ? (
          <LinkSent email={sent} />
        ) : method === "password" || answer?.intent === "mfa" ? (
          <>
            <MfaForm redirectTo={redirectTo} lastResult={resultOf(answer, "mfa")} />
            <p className="switch-method">
              <Link to={`/login?method=link${query}`}>Sign in with an e-mailed link instead</Link>
            </p>
          </>
        ) : (
          <>
            <MagicLinkForm redirectTo={redirectTo} lastResult={resultOf(answer, "magic-link")} />
            <p className="switch-method">
              <Link to={`/login?method=password${query}`}>Sign in with password and MFA code instead</Link>
            </p>
          </>
        )}
        {sent || !providers.length ? null : <CompanySignIn providers={providers} redirectTo={redirectTo} />}
        {sent ? null : (
          <p className="switch-method">
            No account yet? <Link to="/pending">Apply for one</Link>
          </p>
        )}
      </main>
    </div>
  );
}

/** "Sign in with {provider}": plain links, which redirect to the provider (no script needed). */
function CompanySignIn({ providers, redirectTo }: { providers: { id: string; name: string }[]; redirectTo: string }) {
  const query = redirectTo ? `?redirectTo=${encodeURIComponent(redirectTo)}` : "";
  return (
    <nav className="company-sign-in" aria-label="Company sign-in">
      <p className="or-divider">or</p>
      <ul className="plain-list">
        {providers.map((p) => (
          // A document navigation, not a client-side one: the loader redirects to another site.
          <li key={p.id}>
            <a className="btn btn-secondary" href={`/auth/sso/${p.id}${query}`}>
              Sign in with {p.name}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function LinkSent({ email }: { email: string }) {
  return (
    <div className="link-sent" role="status">
      <p>The link has been sent please check your email:</p>
      <p className="sent-email">{email}</p>
      <Form method="get" action="/login">
        <button type="submit" className="btn btn-secondary">
          Back
        </button>
      </Form>
    </div>
  );
}

type Reply = SubmissionResult<string[]> | null | undefined;

function MagicLinkForm({ redirectTo, lastResult }: { redirectTo: string; lastResult: Reply }) {
  const pending = usePending();
  const [form, fields] = useSchemaForm(MagicLinkSchema, { id: "magic-link", lastResult });
  return (
    <Form method="post" {...getFormProps(form)}>
      <input type="hidden" name="intent" value="magic-link" />
      {redirectTo ? <input type="hidden" name="redirectTo" value={redirectTo} /> : null}
      <FormError id={form.errorId} errors={form.errors} />
      <Field label="Email" field={fields.email} type="email" inputProps={{ autoComplete: "email" }} />
      <SubmitButton pending={pending} pendingText="Sending…">
        Submit
      </SubmitButton>
    </Form>
  );
}

function MfaForm({ redirectTo, lastResult }: { redirectTo: string; lastResult: Reply }) {
  const pending = usePending();
  const [form, fields] = useSchemaForm(MfaLoginSchema, { id: "mfa", lastResult });
  return (
    <Form method="post" {...getFormProps(form)}>
      <input type="hidden" name="intent" value="mfa" />
      {redirectTo ? <input type="hidden" name="redirectTo" value={redirectTo} /> : null}
      <FormError id={form.errorId} errors={form.errors} />
      <Field label="Email" field={fields.email} type="email" inputProps={{ autoComplete: "username" }} />
      <Field label="Password" field={fields.password} type="password" inputProps={{ autoComplete: "current-password" }} />
      <FieldShell label="Code" field={fields.code}>
        <CodeInput field={fields.code} />
      </FieldShell>
      <SubmitButton pending={pending} pendingText="Signing in…">
        Login
      </SubmitButton>
    </Form>
  );
}
