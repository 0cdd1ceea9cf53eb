import type { LoaderFunctionArgs } from "@remix-run/node";
import { Outlet, useLoaderData, useMatches } from "@remix-run/react";
import { Header, type HeaderContext } from "~/components/header";
import { SearchProgress } from "~/components/search-progress";
import { SessionWatch } from "~/components/session-watch";
import { SKIP_TO_CONTENT, SkipLinks, type SkipLinksHandle } from "~/components/skip-links";
import { toPublicUser } from "~/models/users.server";
import { requireUser } from "~/sessions.server";
import { getTheme } from "~/web/theme.server";

/** Layout of every signed-in page: the guard, the header and the session check. */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const user = await requireUser(request, context);
  return { user: toPublicUser(user), theme: getTheme(request) };
}

export default function AppLayout() {
  const { user, theme } = useLoaderData<typeof loader>();
  const matches = useMatches();
  // A page about a project or board puts `header` in its loader data; the deepest one wins.
  const context = matches
    .map((m) => (m.data as { header?: HeaderContext } | undefined)?.header)
    .filter(Boolean)
    .pop();
  const skipLinks = matches.flatMap((m) => (m.handle as SkipLinksHandle | undefined)?.skipLinks ?? []);
  return (
    <>
      <SkipLinks links={[SKIP_TO_CONTENT, ...skipLinks]} />
      <Header user={user} theme={theme} context={context ?? null} />
      <main id="main" className="app-main" tabIndex={-1}>
        <Outlet />
      </main>
      <SearchProgress />
      <SessionWatch />
    </>
  );
}
