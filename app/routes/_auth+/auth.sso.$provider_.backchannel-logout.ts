import type { ActionFunctionArgs } from "@remix-run/node";
import { NotFoundError } from "~/lib/errors";
import { backchannelLogout, ssoProvider, SsoRefusal } from "~/services/oidc.server";
import { requestMeta } from "~/sessions.server";
import { z } from "zod";
import { api, readForm } from "~/web/http.server";

/** The provider's post: one logout token (a JWT, a few kB at most). */
const LogoutTokenSchema = z.object({ logout_token: z.string().min(1).max(16_384) });

/**
 * OpenID Connect Back-Channel Logout: the provider posts a signed logout token here (server to server) and the
 * sessions it names end. 200 when the token checks out (also when no session was left), 400 otherwise, with
 * `Cache-Control: no-store` as the specification asks.
 */
export const action = api(async ({ request, params, context }: ActionFunctionArgs) => {
  const provider = await ssoProvider(params.provider);
  if (!provider) throw new NotFoundError("Not found");
  const parsed = LogoutTokenSchema.safeParse(Object.fromEntries(await readForm(request)));
  const headers = { "Cache-Control": "no-store" };
  if (!parsed.success) return Response.json({ error: "invalid_request" }, { status: 400, headers });
  const token = parsed.data.logout_token;
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
