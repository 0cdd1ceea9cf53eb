import { parseWithZod } from "@conform-to/zod";
import type { ActionFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { page, readForm } from "~/web/http.server";
import { safeRedirect } from "~/lib/redirect";
import { ThemeSchema } from "~/lib/schemas";
import { themePreference } from "~/web/theme.server";

export const loader = () => redirect("/dashboard");

/** Stores lightmode / darkmode in a cookie and goes back; a plain form post, so it works without JavaScript. */
export const action = page(async ({ request }: ActionFunctionArgs) => {
  const submission = parseWithZod(await readForm(request), { schema: ThemeSchema });
  if (submission.status !== "success") throw redirect("/dashboard");
  return redirect(safeRedirect(submission.value.redirectTo), {
    headers: { "Set-Cookie": themePreference.serialize(submission.value.theme) },
  });
});
