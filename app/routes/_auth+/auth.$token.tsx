import type { ActionFunctionArgs, MetaFunction } from "@remix-run/node";
import { data, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useNavigation, useParams } from "@remix-run/react";
import { useEffect, useRef } from "react";
import { page, readForm } from "~/web/http.server";
import { Logo } from "~/components/logo";
import { Spinner } from "~/components/spinner";
import { SignInError, startTotpChallenge, verifyMagicLink } from "~/services/auth.server";
import { requestMeta, signIn, totpChallengeCookie } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Logging in | Koala" }];

/**
 * GET only shows the page: mail scanners that follow links must not use the token.
 * The token is used by the POST, which the page sends by itself with JavaScript, or by the button without.
 */
export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const meta = requestMeta(request, context);
  try {
    const form = await readForm(request);
    const result = await verifyMagicLink(String(form.get("token") ?? ""), meta);
    if (result.totpRequired) {
      const challenge = await startTotpChallenge(result);
      throw redirect("/auth/verify", { headers: { "Set-Cookie": await totpChallengeCookie(challenge) } });
    }
    return await signIn(request, meta, result.userId, result.redirectTo, "magic_link");
  } catch (error) {
    if (error instanceof SignInError) return data({ error: error.message }, { status: error.status });
    throw error;
  }
});

export default function AuthToken() {
  const { token } = useParams();
  const result = useActionData<typeof action>();
  const navigation = useNavigation();
  const formRef = useRef<HTMLFormElement>(null);
  const sent = useRef(false);
  useEffect(() => {
    if (!sent.current && !result) {
      sent.current = true;
      formRef.current?.requestSubmit();
    }
  }, [result]);
  return (
    <main className="auth-page" aria-labelledby="auth-title">
      <Logo />
      {result?.error ? (
        <>
          <h1 id="auth-title">Sign-in link not valid</h1>
          <p role="alert">{result.error}</p>
          <Link to="/login" className="btn btn-primary">
            Back to sign in
          </Link>
        </>
      ) : (
        <>
          <h1 id="auth-title">
            <Spinner label="Logging in…" />
          </h1>
          <Form method="post" ref={formRef}>
            <input type="hidden" name="token" value={token} />
            <button type="submit" className="btn btn-primary" disabled={navigation.state !== "idle"}>
              Continue to Koala
            </button>
          </Form>
        </>
      )}
    </main>
  );
}
