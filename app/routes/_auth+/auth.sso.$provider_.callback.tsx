import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data, redirect } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { SsoRefusalPage } from "~/components/sso-refusal";
import { NotFoundError } from "~/lib/errors";
import { completeSignIn, ssoProvider, SsoRefusal } from "~/services/oidc.server";
import { startTotpChallenge } from "~/services/auth.server";
import { requestMeta, signIn, totpChallengeCookie } from "~/sessions.server";
import { page } from "~/web/http.server";
import { clearSsoTransaction, readSsoTransaction } from "~/web/sso-transaction.server";

export const meta: MetaFunction = () => [{ title: "Sign in | Koala" }];

/**
 * Where the provider sends the person back: the code is exchanged and checked, the account found or made, and a
 * Koala session starts; or a page says why not. The transaction cookie is cleared either way (it is used once).
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const provider = await ssoProvider(params.provider);
  if (!provider) throw new NotFoundError("Page not found");
  const meta = requestMeta(request, context);
  const transaction = await readSsoTransaction(request);
  // Used once: cleared whatever happens (and only when there was one to clear).
  const headers = new Headers(transaction ? { "Set-Cookie": await clearSsoTransaction() } : {});
  try {
    const done = await completeSignIn(provider, new URL(request.url), transaction, meta);
    const sso = { provider: provider.id, subject: done.subject, sid: done.sid };
    if (done.totpSecret) {
      // An account with Koala's TOTP enrolled gives its code too, as after an e-mailed link.
      const challenge = await startTotpChallenge({ userId: done.userId, redirectTo: done.redirectTo, totpRequired: true, sso });
      headers.append("Set-Cookie", await totpChallengeCookie(challenge));
      return redirect("/auth/verify", { headers });
    }
    const response = await signIn(request, meta, done.userId, done.redirectTo, `oidc:${provider.id}`, sso);
    headers.forEach((value, name) => name.toLowerCase() === "set-cookie" && response.headers.append(name, value));
    return response;
  } catch (error) {
    if (error instanceof SsoRefusal)
      return data({ message: error.message, contacts: error.contacts, applyUrl: error.applyUrl }, { status: error.status, headers });
    throw error;
  }
});

export default function SsoCallback() {
  const refusal = useLoaderData<typeof loader>();
  return <SsoRefusalPage message={refusal.message} contacts={refusal.contacts} applyUrl={refusal.applyUrl} />;
}
