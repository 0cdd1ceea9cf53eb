import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Links, Meta, Outlet, Scripts, ScrollRestoration, useLoaderData, useRouteError, useRouteLoaderData } from "@remix-run/react";
import type { ReactNode } from "react";
import { describeError } from "~/components/error-boundary";
import { ErrorPage } from "~/components/error-page";
import { Toasts } from "~/components/toasts";
import { useNonce } from "~/lib/nonce";
import { getTheme } from "~/web/theme.server";
import { takeToast } from "~/web/toast.server";
import styles from "~/styles/app.css?url";

export const links: LinksFunction = () => [
  { rel: "stylesheet", href: styles },
  { rel: "icon", href: "/favicon.svg", type: "image/svg+xml" },
];

/**
 * The title of a page whose route names none, and of every error page: its message (axe's document-title; spec:
 * 'X | <product>'). A route's own meta replaces it.
 */
export const meta: MetaFunction = ({ error }) => [{ title: error ? `${describeError(error).message} | Koala` : "Koala" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const theme = getTheme(request);
  const { toast, setCookie } = await takeToast(request);
  return data({ theme, toast }, setCookie ? { headers: { "Set-Cookie": setCookie } } : undefined);
}

/** The document shell; the theme class comes from a cookie, so the server paints the right theme with no script. */
export function Layout({ children }: { children: ReactNode }) {
  const root = useRouteLoaderData<typeof loader>("root");
  const nonce = useNonce();
  return (
    <html lang="en" className={root?.theme ?? "lightmode"}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content={root?.theme === "darkmode" ? "dark" : "light"} />
        <Meta />
        <Links />
      </head>
      <body>
        {children}
        <ScrollRestoration nonce={nonce} />
        <Scripts nonce={nonce} />
      </body>
    </html>
  );
}

export default function App() {
  const { toast } = useLoaderData<typeof loader>();
  return (
    <>
      <Outlet />
      <Toasts toast={toast} />
    </>
  );
}

/** Outside every layout (the root itself failed): the full error page, with the status's message. */
export function ErrorBoundary() {
  const { status, message } = describeError(useRouteError());
  return <ErrorPage status={status} message={message} />;
}
