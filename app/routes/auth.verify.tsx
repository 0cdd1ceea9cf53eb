import { getFormProps, getInputProps, useForm } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data, redirect } from "@remix-run/node";
import { Form, useActionData, useNavigation } from "@remix-run/react";
import { CodeInput } from "~/components/code-input";
import { Field, FormError } from "~/components/field";
import { Logo } from "~/components/logo";
import { TotpChallengeSchema } from "~/lib/schemas";
import { peekToken } from "~/models/sign-in-tokens.server";
import { authenticatorFor, SignInError } from "~/services/auth.server";
import { readTotpChallenge, requestMeta, signIn } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Verification code | Koala" }];

/** After a magic link, a user with TOTP enrolled proves the second factor here before the session starts. */
export async function loader({ request }: LoaderFunctionArgs) {
  const challenge = await readTotpChallenge(request);
  if (!challenge || !(await peekToken(challenge, "totp_challenge"))) throw redirect("/login");
  return null;
}

export async function action({ request, context }: ActionFunctionArgs) {
  const meta = requestMeta(request, context);
  const submission = parseWithZod(await request.clone().formData(), { schema: TotpChallengeSchema });
  if (submission.status !== "success") return data(submission.reply(), { status: 400 });
  try {
    const result = await authenticatorFor(meta, await readTotpChallenge(request)).authenticate("totp-challenge", request);
    return await signIn(request, meta, result.userId, result.redirectTo, "magic_link_totp");
  } catch (error) {
    if (error instanceof SignInError)
      return data(submission.reply({ formErrors: [error.message], hideFields: ["code"] }), { status: error.status });
    throw error;
  }
}

export default function VerifyCode() {
  const lastResult = useActionData<typeof action>();
  const busy = useNavigation().state === "submitting";
  const [form, fields] = useForm({
    id: "totp",
    lastResult,
    shouldValidate: "onBlur",
    // Revalidating on input (not blur): a blur-time revalidation while the button is pressed can swallow the submit.
    shouldRevalidate: "onInput",
    onValidate: ({ formData }) => parseWithZod(formData, { schema: TotpChallengeSchema }),
  });
  return (
    <main className="auth-page" aria-labelledby="verify-title">
      <Logo />
      <h1 id="verify-title">Enter your MFA code</h1>
      <p>Open your authenticator app and type the six-digit code for Koala.</p>
      <Form method="post" {...getFormProps(form)}>
        <FormError id={form.errorId} errors={form.errors} />
        <Field label="Code" htmlFor={fields.code.id} errorId={fields.code.errorId} errors={fields.code.errors}>
          <CodeInput {...getInputProps(fields.code, { type: "text" })} autoFocus />
        </Field>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          Verify
        </button>
      </Form>
    </main>
  );
}
