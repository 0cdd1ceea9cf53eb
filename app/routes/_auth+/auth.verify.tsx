import { getFormProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data, redirect } from "@remix-run/node";
import { Form, useActionData } from "@remix-run/react";
import { CodeInput } from "~/components/code-input";
import { FieldShell, FormError, SubmitButton, usePending, useSchemaForm } from "~/components/forms";
import { Logo } from "~/components/logo";
import { page, readForm } from "~/web/http.server";
import { CODE_REPLY, TotpChallengeSchema } from "~/lib/schemas";
import { peekToken } from "~/models/sign-in-tokens.server";
import { SignInError, verifyTotpChallenge } from "~/services/auth.server";
import { readTotpChallenge, requestMeta, signIn } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Verification code | Koala" }];

/**
 * After a magic link or a company sign-in, a user with TOTP enrolled proves the second factor here before the session
 * starts.
 */
export async function loader({ request }: LoaderFunctionArgs) {
  const challenge = await readTotpChallenge(request);
  if (!challenge || !(await peekToken(challenge, "totp_challenge"))) throw redirect("/login");
  return null;
}

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const meta = requestMeta(request, context);
  const submission = parseWithZod(await readForm(request), { schema: TotpChallengeSchema });
  if (submission.status !== "success") return data(submission.reply(CODE_REPLY), { status: 400 });
  try {
    const result = await verifyTotpChallenge(await readTotpChallenge(request), submission.value.code, meta);
    const method = result.sso ? `oidc:${result.sso.provider}+totp` : "magic_link_totp";
    return await signIn(request, meta, result.userId, result.redirectTo, method, result.sso ?? null);
  } catch (error) {
    if (error instanceof SignInError)
      return data(submission.reply({ ...CODE_REPLY, formErrors: [error.message] }), { status: error.status });
    throw error;
  }
});

export default function VerifyCode() {
  const lastResult = useActionData<typeof action>();
  const pending = usePending();
  const [form, fields] = useSchemaForm(TotpChallengeSchema, { id: "totp", lastResult });
  return (
    <main className="auth-page" aria-labelledby="verify-title">
      <Logo />
      <h1 id="verify-title">Enter your MFA code</h1>
      <p>Open your authenticator app and type the six-digit code for Koala.</p>
      <Form method="post" {...getFormProps(form)}>
        <FormError id={form.errorId} errors={form.errors} />
        <FieldShell label="Code" field={fields.code}>
          <CodeInput field={fields.code} autoFocus />
        </FieldShell>
        <SubmitButton pending={pending} pendingText="Verifying…">
          Verify
        </SubmitButton>
      </Form>
    </main>
  );
}
