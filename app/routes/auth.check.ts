import type { LoaderFunctionArgs } from "@remix-run/node";
import { getUser } from "~/sessions.server";

/** The periodic session check: 204 while signed in, 401 once not. No body, not cached. */
export async function loader({ request }: LoaderFunctionArgs) {
  const user = await getUser(request);
  return new Response(null, { status: user ? 204 : 401, headers: { "Cache-Control": "no-store" } });
}
