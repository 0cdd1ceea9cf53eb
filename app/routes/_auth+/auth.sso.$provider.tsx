import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data, redirect } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { SsoRefusalPage } from "~/components/sso-refusal";
import { NotFoundError } from "~/lib/errors";
import { beginSignIn, ssoProvider, SsoRefusal } from "~/services/oidc.server";
import { requestMeta } from "~/sessions.server";
import { page } from "~/web/http.server";
import { writeSsoTransaction } from "~/web/sso-transaction.server";

export const meta: MetaFunction = () => [{ title: "Sign in | Koala" }];

/**
 * "Sign in with {provider}": a plain link here, which redirects to the provider (no script needed), keeping the
 * transaction in a signed cookie. A provider that does not answer gets a page saying so.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const provider = await ssoProvider(params.provider);
  if (!provider) throw new NotFoundError("Page not found");
  const url = new URL(request.url);
  try {
    const out = await beginSignIn(
      provider,
      {
        redirectTo: url.searchParams.get("redirectTo"),
        loginHint: url.searchParams.get("login_hint"),
      },
      requestMeta(request, context),
    );
    return redirect(out.url, { headers: { "Set-Cookie": await writeSsoTransaction(out.transaction), "Cache-Control": "no-store" } });
  } catch (error) {
    if (error instanceof SsoRefusal) return data({ message: error.message, contacts: error.contacts }, { status: error.status });
    throw error;
  }
});

export default function SsoStart() {
  const refusal = useLoaderData<typeof loader>();
  return <SsoRefusalPage message={refusal.message} contacts={refusal.contacts} />;
}
