import { PassThrough } from "node:stream";
import type { AppLoadContext, EntryContext, HandleDataRequestFunction, HandleErrorFunction } from "@remix-run/node";
import { createReadableStreamFromReadable } from "@remix-run/node";
import { RemixServer } from "@remix-run/react";
import { isbot } from "isbot";
import { renderToPipeableStream } from "react-dom/server";
import { getErrorMessage } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { CardsHtmlProvider } from "~/components/static-cards";
import { NonceProvider } from "~/lib/nonce";
import { cardsHtml } from "~/components/card-fragments.server";
import { lookUp, memoizable } from "~/web/render-memo.server";

export { boot } from "~/services/boot.server";
export { config } from "~/config.server";
export { mediaAnswer, sharedMediaAnswer } from "~/web/media.server";
export { sharedPageAnswer } from "~/web/shared-page-cache.server";
export { readiness } from "~/services/readiness.server";
export { providerOrigins } from "~/services/oidc.server";
export { log } from "~/lib/log.server";
export { metricsText, observeRequest, watchAdmission, watchInFlight } from "~/services/metrics.server";

const ABORT_DELAY = 5_000;

/**
 * Pages and their data are never stored by the browser or a proxy unless a route says otherwise: after a
 * logout, Back must not show a signed-in page from the cache.
 */
const noStore = (headers: Headers) => {
  if (!headers.has("Cache-Control")) headers.set("Cache-Control", "private, no-store");
};

export default async function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  remixContext: EntryContext,
  loadContext: AppLoadContext,
) {
  const nonce = loadContext.nonce;
  noStore(responseHeaders);
  const pending = loadContext.sharedPage;
  const leaf = remixContext.staticHandlerContext.matches.at(-1);
  // Only the shared board page, for the very link it was keyed by (never another page a crafted request rendered).
  const store =
    pending &&
    responseStatusCode === 200 &&
    !responseHeaders.has("Set-Cookie") &&
    leaf?.route.id === "routes/_shared-board+/shared-board.$sharedUrl" &&
    leaf.params.sharedUrl === pending.sharedUrl
      ? pending.store
      : null;
  if (store) return renderWhole(request, responseStatusCode, responseHeaders, remixContext, nonce, store);
  if (loadContext.memoizeRenders && memoizable(request, responseStatusCode, remixContext, nonce)) {
    const memo = await lookUp(request, responseStatusCode, remixContext, nonce);
    if (memo.hit) return answerMemoized(responseStatusCode, responseHeaders, memo.hit);
    const keep = memo.keep;
    if (keep) return renderWhole(request, responseStatusCode, responseHeaders, remixContext, nonce, (html, _h, n) => keep(html, n));
  }
  // Bots and no-JS clients get the whole document at once; browsers get it streamed.
  const waitForAll = isbot(request.headers.get("user-agent") ?? "");
  const page = await renderDocument(request, remixContext, nonce, waitForAll ? "all" : "shell");
  responseHeaders.set("Content-Type", "text/html; charset=utf-8");
  return new Response(createReadableStreamFromReadable(page.body), {
    headers: responseHeaders,
    status: page.failed() ? 500 : responseStatusCode,
  });
}

/**
 * The one render of a document: resolves once its shell (or, for `all`, everything) is ready, with the HTML as a
 * stream and whether any part failed to render. A render still running after ABORT_DELAY is aborted.
 */
function renderDocument(request: Request, remixContext: EntryContext, nonce: string, readyWhen: "shell" | "all") {
  return new Promise<{ body: PassThrough; failed: () => boolean }>((resolve, reject) => {
    let failed = false;
    let shellRendered = false;
    const { pipe, abort } = renderToPipeableStream(
      <NonceProvider value={nonce}>
        <CardsHtmlProvider value={cardsHtml}>
          <RemixServer context={remixContext} url={request.url} abortDelay={ABORT_DELAY} nonce={nonce} />
        </CardsHtmlProvider>
      </NonceProvider>,
      {
        nonce,
        onShellReady() {
          shellRendered = true;
          if (readyWhen === "shell") ready();
        },
        onAllReady() {
          if (readyWhen === "all") ready();
        },
        onShellError: reject,
        onError(error: unknown) {
          failed = true;
          // Logged once, without the request's cookies or body.
          if (shellRendered) log.error("render failed", { error: getErrorMessage(error) });
        },
      },
    );
    const timer = setTimeout(abort, ABORT_DELAY);
    function ready() {
      const body = new PassThrough();
      // The abort timer would keep the finished render reachable for its whole delay (every page of 5 s).
      body.on("close", () => clearTimeout(timer));
      body.on("end", () => clearTimeout(timer));
      resolve({ body, failed: () => failed });
      pipe(body);
    }
  });
}

/** A page answered from an earlier render of the same URL, cookies and data (web/render-memo), its parts as they are kept. */
function answerMemoized(status: number, headers: Headers, page: { body: Buffer[]; length: number }) {
  headers.set("Content-Type", "text/html; charset=utf-8");
  headers.set("Content-Length", String(page.length));
  headers.set("Server-Timing", 'render;desc="memo"');
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of page.body) controller.enqueue(part);
      controller.close();
    },
  });
  return new Response(body, { headers, status });
}

/** A page rendered whole, handed to `store` (the shared-page cache, the render memo), then sent. */
async function renderWhole(
  request: Request,
  status: number,
  headers: Headers,
  remixContext: EntryContext,
  nonce: string,
  store: (html: string, headers: Headers, nonce: string) => void,
) {
  const page = await renderDocument(request, remixContext, nonce, "all");
  const chunks: Buffer[] = [];
  for await (const chunk of page.body) chunks.push(chunk as Buffer);
  const html = Buffer.concat(chunks).toString("utf8");
  headers.set("Content-Type", "text/html; charset=utf-8");
  // A page that failed to render in part is sent, never kept; a page that could not be kept is still sent.
  try {
    if (!page.failed()) store(html, headers, nonce);
  } catch (error) {
    log.error("rendered page not kept", { error: getErrorMessage(error) });
  }
  return new Response(html, { headers, status: page.failed() ? 500 : status });
}

export const handleDataRequest: HandleDataRequestFunction = (response) => {
  noStore(response.headers);
  return response;
};

/** An unexpected failure in a loader or action: one log line (no stack, no request data); aborted requests are not errors. */
export const handleError: HandleErrorFunction = (error, { request, context }) => {
  if (request.signal.aborted) return;
  log.error("request failed", {
    requestId: context.requestId,
    method: request.method,
    path: new URL(request.url).pathname,
    error: getErrorMessage(error),
  });
};
