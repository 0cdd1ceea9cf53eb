import { Writable } from "node:stream";
import type { AppLoadContext, EntryContext, HandleDataRequestFunction, HandleErrorFunction } from "@remix-run/node";
import { RemixServer } from "@remix-run/react";
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
  return renderWhole(request, responseStatusCode, responseHeaders, remixContext, nonce, null);
}

/**
 * The one render of a document, whole: resolves with its HTML once every part is rendered, and whether any part
 * failed. No loader defers (each returns its data before the render starts), so a page renders in a millisecond or
 * two and streaming its shell first would gain the browser nothing; sent whole, it goes in one write with its length
 * (streamed, the same page cost ~6% more of the server's time, bench P2-first). A render still running after
 * ABORT_DELAY is aborted.
 */
function renderDocument(request: Request, remixContext: EntryContext, nonce: string) {
  return new Promise<{ html: Buffer; failed: boolean }>((resolve, reject) => {
    let failed = false;
    let shellRendered = false;
    let piped = false;
    const chunks: Buffer[] = [];
    // No 'close' after it finishes: React's pipe aborts the render on its destination's close, and ending an ended
    // stream again built an error object per page (ERR_STREAM_ALREADY_FINISHED).
    const body = new Writable({
      emitClose: false,
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        done();
      },
      final(done) {
        clearTimeout(timer);
        resolve({ html: Buffer.concat(chunks), failed });
        done();
      },
    });
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
        },
        onAllReady() {
          piped = true;
          pipe(body);
        },
        onShellError(error: unknown) {
          clearTimeout(timer);
          reject(error);
        },
        onError(error: unknown) {
          failed = true;
          // Logged once, without the request's cookies or body (a shell's error is Remix's to log, as a loader's is).
          if (shellRendered) log.error("render failed", { error: getErrorMessage(error) });
        },
      },
    );
    // React ends the sink when the page is whole; a failure while writing it destroys the sink instead.
    body.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    const timer = setTimeout(() => {
      abort();
      // An abort before the shell was ready calls none of the callbacks when no Suspense boundary holds the part
      // still waiting (React 18.3): the request must not wait for ever.
      if (!piped) reject(new Error(`The page did not render within ${ABORT_DELAY / 1000} s`));
    }, ABORT_DELAY);
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

/** A page rendered whole, handed to `store` (the shared-page cache, the render memo) if there is one, then sent. */
async function renderWhole(
  request: Request,
  status: number,
  headers: Headers,
  remixContext: EntryContext,
  nonce: string,
  store: ((html: string, headers: Headers, nonce: string) => void) | null,
) {
  const page = await renderDocument(request, remixContext, nonce);
  headers.set("Content-Type", "text/html; charset=utf-8");
  // A page that failed to render in part is sent, never kept; a page that could not be kept is still sent.
  try {
    if (store && !page.failed) store(page.html.toString("utf8"), headers, nonce);
  } catch (error) {
    log.error("rendered page not kept", { error: getErrorMessage(error) });
  }
  // Its length, so that it goes without chunked encoding (the compression middleware drops it when it compresses).
  headers.set("Content-Length", String(page.html.byteLength));
  const body = new Uint8Array(page.html.buffer as ArrayBuffer, page.html.byteOffset, page.html.byteLength);
  return new Response(body, { headers, status: page.failed ? 500 : status });
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
