import { data } from "@remix-run/node";
import { GeneralErrorBoundary } from "~/components/error-boundary";

/** /image without an id: the spec's 'Image is undefined' (its title comes from the error, see root.tsx). */
export const loader = () => {
  throw data({ message: "Image is undefined" }, { status: 404 });
};
export default function NoImage() {
  return null;
}
export const ErrorBoundary = GeneralErrorBoundary;
