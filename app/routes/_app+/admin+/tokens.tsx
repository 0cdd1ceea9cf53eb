import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { TokenTable } from "~/components/token-table";
import { InvalidError } from "~/lib/errors";
import { parseId } from "~/lib/ids";
import { allTokens, revokeToken } from "~/models/api-tokens.server";
import { adminActor } from "~/routes/_app+/admin+/admin.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";

/** Everyone's personal access tokens (newest first), and Revoke for any that still works: for a leaver, a leak. */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await adminActor(request, context);
  return { tokens: await allTokens(actor), now: Date.now() };
});

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await adminActor(request, context);
  const form = await readForm(request);
  const id = parseId(form.get("token"));
  if (form.get("intent") !== "revoke" || !id) throw new InvalidError();
  await revokeToken(actor, id);
  return redirectWithToast(request, "/admin/tokens", { kind: "success", title: "Token revoked", description: "It stops working at once." });
});

export default function AdminTokens() {
  const { tokens, now } = useLoaderData<typeof loader>();
  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Access tokens</h2>
      <p>Tokens people made for the API, with what each may do and its last use. A token revoked here stops working at once.</p>
      {tokens.length ? (
        <TokenTable tokens={tokens} now={now} labelledBy="tokens-heading" owners />
      ) : (
        <p className="empty">No tokens yet.</p>
      )}
    </section>
  );
}
