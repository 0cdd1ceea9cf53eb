import type { ActionFunctionArgs } from "@remix-run/node";
import { NotFoundError } from "~/lib/errors";
import { backchannelLogout, ssoProvider, SsoRefusal } from "~/services/oidc.server";
import { requestMeta } from "~/sessions.server";
import { api, readForm } from "~/web/http.server";

/**
 * OpenID Connect Back-Channel Logout: the provider posts a signed logout token here (server to server) and the
 * sessions it names end. 200 when the token checks out (also when no session was left), 400 otherwise, with
 * `Cache-Control: no-store` as the specification asks.
 */
export const action = api(async ({ request, params, context }: ActionFunctionArgs) => {
  const provider = await ssoProvider(params.provider);
  if (!provider) throw new NotFoundError("Not found");
  const form = await readForm(request);
  const token = form.get("logout_token");
  const headers = { "Cache-Control": "no-store" };
  if (typeof token !== "string" || !token || token.length > 16_384)
    return Response.json({ error: "invalid_request" }, { status: 400, headers });
  try {
    const ended = await backchannelLogout(provider, token, requestMeta(request, context));
    return Response.json({ ended }, { headers });
  } catch (error) {
    if (error instanceof SsoRefusal) return Response.json({ error: "invalid_request" }, { status: 400, headers });
    throw error;
  }
});

export const loader = () => {
  throw new Response("Method not allowed", { status: 405, headers: { Allow: "POST" } });
};
