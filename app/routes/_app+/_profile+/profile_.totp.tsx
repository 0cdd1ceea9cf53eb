import { getFormProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import QRCode from "qrcode";
import { CodeInput } from "~/components/code-input";
import { CancelLink, FieldShell, FormError, SubmitButton, usePending, useSchemaForm } from "~/components/forms";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { TotpCodeSchema } from "~/lib/account-schemas";
import { CODE_REPLY } from "~/lib/schemas";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { otpauthUri } from "~/lib/totp.server";
import { confirmTotp, pendingTotpSecret, profileOf } from "~/models/profile.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Set up two-factor authentication | Koala" }];

/**
 * TOTP enrolment: the secret as a QR code drawn on the server (an SVG in the page: no image service sees it) and as
 * text, confirmed by a first code. The secret waits in the database until then; nothing changes for sign-in before.
 */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await requireActor(request, context);
  const secret = await pendingTotpSecret(actor);
  if (!secret) throw redirect("/profile");
  const { email } = await profileOf(actor);
  const qr = await QRCode.toString(otpauthUri(secret, email), { type: "svg", errorCorrectionLevel: "M", margin: 2 });
  return { secret, qr };
});

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await requireActor(request, context);
  const submission = parseWithZod(await readForm(request), { schema: TotpCodeSchema });
  if (submission.status !== "success") return data({ result: submission.reply(CODE_REPLY) }, { status: 400 });
  if (!(await confirmTotp(actor, submission.value.code)))
    return data({ result: submission.reply({ ...CODE_REPLY, fieldErrors: { code: ["Invalid credentials."] } }) }, { status: 400 });
  return redirectWithToast(request, "/profile", { kind: "success", title: "Two-factor authentication is on" });
});

export default function TotpSetup() {
  const { secret, qr } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const pending = usePending();
  const [form, fields] = useSchemaForm(TotpCodeSchema, { id: "totp", lastResult: answer?.result });
  return (
    <section className="settings-page" aria-labelledby="totp-heading">
      <h1 id="totp-heading">Set up two-factor authentication</h1>
      <ol>
        <li>Scan this code with your authenticator app, or type the key below into it.</li>
        <li>Enter the six-digit code the app shows.</li>
      </ol>
      {/* The SVG is the qrcode library's own drawing of the otpauth URI: no user input reaches it as markup. */}
      <div className="qr-code" role="img" aria-label="QR code of your authenticator key" dangerouslySetInnerHTML={{ __html: qr }} />
      <p>
        Key: <code data-testid="totp-secret">{secret.replace(/(.{4})/g, "$1 ").trim()}</code>
      </p>
      <Form method="post" {...getFormProps(form)}>
        <FormError id={form.errorId} errors={form.errors} />
        <FieldShell label="Code" field={fields.code}>
          <CodeInput field={fields.code} />
        </FieldShell>
        <div className="form-actions">
          <SubmitButton pending={pending} pendingText="Checking…">
            Turn on
          </SubmitButton>
          <CancelLink to="/profile" />
        </div>
      </Form>
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
