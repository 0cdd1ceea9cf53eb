import type { MetaFunction } from "@remix-run/node";
import { ErrorPage } from "~/components/error-page";

export const meta: MetaFunction = () => [{ title: "Page not found | Koala" }];

export default function NotFoundPage() {
  return <ErrorPage status={404} />;
}
