import type { LoaderFunctionArgs } from "@remix-run/node";
import { sessionIsActive } from "~/sessions.server";

/** The periodic session check: 204 while signed in, 401 once not. No body, not cached. */
export async function loader({ request }: LoaderFunctionArgs) {
  const active = await sessionIsActive(request);
  return new Response(null, { status: active ? 204 : 401, headers: { "Cache-Control": "no-store" } });
}
