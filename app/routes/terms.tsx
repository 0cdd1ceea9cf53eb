import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { TermsDialog } from "~/components/terms-dialog";
import { page, readForm } from "~/web/http.server";
import { safeRedirect } from "~/lib/redirect";
import { acknowledgeTerms } from "~/models/users.server";
import { actorOf } from "~/models/actor";
import { requireUser, signOut } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Terms and Conditions | Koala" }];

/**
 * The first-visit Terms and Conditions (spec: Yes stores the acknowledgement, No signs out). Every signed-in
 * page leads here until the person has answered Yes (requireUser), then back to where they were going.
 */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const user = await requireUser(request, context, { pendingTerms: true });
  const redirectTo = safeRedirect(new URL(request.url).searchParams.get("redirectTo"));
  if (user.terms_acknowledged_at !== null) throw redirect(redirectTo);
  return { redirectTo };
});

const TermsAnswer = z.object({ value: z.enum(["yes", "no"]), redirectTo: z.string().max(2000).optional() });

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const user = await requireUser(request, context, { pendingTerms: true });
  const parsed = TermsAnswer.safeParse(Object.fromEntries(await readForm(request)));
  if (!parsed.success) throw redirect("/terms");
  if (parsed.data.value === "no") return signOut(request, context);
  await acknowledgeTerms(actorOf(user));
  return redirect(safeRedirect(parsed.data.redirectTo));
});

export default function Terms() {
  const { redirectTo } = useLoaderData<typeof loader>();
  return (
    <main className="terms-page" id="main">
      <TermsDialog redirectTo={redirectTo} />
    </main>
  );
}
