import type { ActionFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { page } from "~/web/http.server";
import { providerLogoutUrl } from "~/services/oidc.server";
import { signOut } from "~/sessions.server";

export const loader = () => redirect("/dashboard");

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  return signOut(request, context, providerLogoutUrl);
});
