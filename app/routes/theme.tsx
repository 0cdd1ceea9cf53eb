import { parseWithZod } from "@conform-to/zod";
import type { ActionFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { safeRedirect } from "~/lib/redirect";
import { ThemeSchema } from "~/lib/schemas";
import { themeCookie } from "~/sessions.server";

export const loader = () => redirect("/dashboard");

/** Stores lightmode / darkmode in a cookie and goes back; a plain form post, so it works without JavaScript. */
export async function action({ request }: ActionFunctionArgs) {
  const submission = parseWithZod(await request.formData(), { schema: ThemeSchema });
  if (submission.status !== "success") throw redirect("/dashboard");
  return redirect(safeRedirect(submission.value.redirectTo), {
    headers: { "Set-Cookie": await themeCookie(submission.value.theme) },
  });
}
