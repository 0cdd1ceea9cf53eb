import type { LoaderFunctionArgs } from "@remix-run/node";
import { config } from "~/config.server";
import { demoWscImage, demoWscManifest } from "~/services/demo.server";

/**
 * The demo's WSC source (services/demo.server.ts): its manifest and images, served by the app itself so that the
 * demo's re-import works on a machine without a network. Only while the demo is on (DEMO_SEED=auto outside
 * production); anything else is not found.
 */
export async function loader({ params }: LoaderFunctionArgs) {
  const notFound = () => new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain" } });
  if (!config().demo) return notFound();
  if (params.file === "globex.json") return Response.json(demoWscManifest());
  const image = await demoWscImage(params.file ?? "");
  if (!image) return notFound();
  return new Response(new Uint8Array(image), { headers: { "Content-Type": "image/jpeg", "Content-Length": String(image.length) } });
}
