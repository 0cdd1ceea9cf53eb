import type { ActionFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { requestMeta, signOut } from "~/sessions.server";

export const loader = () => redirect("/dashboard");

export async function action({ request, context }: ActionFunctionArgs) {
  return signOut(request, requestMeta(request, context));
}
