import { data } from "@remix-run/node";
import { GeneralErrorBoundary } from "~/components/error-boundary";

/** /image without an id. */
export const loader = () => {
  throw data({ message: "Image not found" }, { status: 404 });
};
export default function NoImage() {
  return null;
}
export const ErrorBoundary = GeneralErrorBoundary;
