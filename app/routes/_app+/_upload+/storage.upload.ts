import type { ActionFunctionArgs } from "@remix-run/node";
import { getErrorMessage } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { ObjectTooLarge } from "~/services/storage-contract";
import { FileStorage, storage } from "~/services/storage.server";

/**
 * Upload step 2 for the filesystem driver: the PUT target of its signed URLs (S3 serves its own).
 * The signature is the permission, as with S3: key, size limit and expiry are signed, nothing else is trusted.
 */
export async function action({ request }: ActionFunctionArgs) {
  const store = storage();
  if (!(store instanceof FileStorage)) return new Response("Not found", { status: 404 });
  if (request.method !== "PUT") return new Response("Method not allowed", { status: 405, headers: { Allow: "PUT" } });
  const checked = store.verifyUpload(new URL(request.url).searchParams);
  if ("error" in checked) return new Response(checked.error, { status: 403 });
  const tooLarge = () => new Response(`The file is larger than ${checked.maxBytes} bytes.`, { status: 413 });
  if (Number(request.headers.get("Content-Length") ?? 0) > checked.maxBytes) return tooLarge();
  if (!request.body) return new Response("No file was sent.", { status: 400 });
  try {
    await store.putStream(checked.key, request.body as unknown as AsyncIterable<Uint8Array>, checked.maxBytes);
  } catch (err) {
    if (err instanceof ObjectTooLarge) return tooLarge();
    // The body stopped before its end (the browser went away): nothing was kept under the key.
    log.warn("upload not received whole", { error: getErrorMessage(err) });
    return new Response("The file did not arrive whole.", { status: 400 });
  }
  return new Response(null, { status: 200 });
}

export const loader = () => new Response("Method not allowed", { status: 405, headers: { Allow: "PUT" } });
