import type { MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { ErrorPage } from "~/components/error-page";

export const meta: MetaFunction = () => [{ title: "Page not found | Koala" }];

/** Any unknown path: the 404 page, with status 404 (not a redirect, so the address stays as typed). */
export const loader = () => data(null, { status: 404 });
export const action = () => data(null, { status: 404 });

export default function CatchAll() {
  return <ErrorPage status={404} />;
}
