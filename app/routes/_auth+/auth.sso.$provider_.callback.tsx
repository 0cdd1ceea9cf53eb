import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { SsoRefusalPage } from "~/components/sso-refusal";
import { NotFoundError } from "~/lib/errors";
import { completeSignIn, ssoProvider, SsoRefusal } from "~/services/oidc.server";
import { requestMeta, signIn } from "~/sessions.server";
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
  const clear = await clearSsoTransaction();
  try {
    const done = await completeSignIn(provider, new URL(request.url), await readSsoTransaction(request), meta);
    const response = await signIn(request, meta, done.userId, done.redirectTo, `oidc:${provider.id}`, {
      provider: provider.id,
      subject: done.subject,
      sid: done.sid,
    });
    response.headers.append("Set-Cookie", clear);
    return response;
  } catch (error) {
    if (error instanceof SsoRefusal)
      return data({ message: error.message, contacts: error.contacts }, { status: error.status, headers: { "Set-Cookie": clear } });
    throw error;
  }
});

export default function SsoCallback() {
  const refusal = useLoaderData<typeof loader>();
  return <SsoRefusalPage message={refusal.message} contacts={refusal.contacts} />;
}
