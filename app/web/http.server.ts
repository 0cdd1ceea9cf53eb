import type { SubmissionResult } from "@conform-to/react";
import { data, redirect } from "@remix-run/node";
import { log } from "~/lib/log.server";
import { flashToast, type Toast } from "~/web/toast.server";
import { getErrorMessage, HttpError, InvalidError } from "../lib/errors";

/**
 * One way to turn failures into answers. Pages: an HttpError becomes `data({ message, detail?, link? }, { status })`,
 * which the route's error boundary renders. JSON endpoints: every failure is JSON `{ error }` with its status.
 * Anything unexpected is logged once (one line, no stack, no request data) and answers 500.
 */
type Handler<A, R> = (args: A) => Promise<R>;

export function page<A, R>(handler: Handler<A, R>): Handler<A, R> {
  return async (args) => {
    try {
      return await handler(args);
    } catch (error) {
      if (error instanceof HttpError)
        throw data({ message: error.message, ...error.more }, { status: error.status, headers: error.headers });
      throw error;
    }
  };
}

interface ThrownData {
  type: "DataWithResponseInit";
  data: unknown;
  init: ResponseInit | null;
}
const isThrownData = (e: unknown): e is ThrownData => (e as ThrownData | null)?.type === "DataWithResponseInit";

export function api<A>(handler: Handler<A, Response>): Handler<A, Response> {
  return async (args) => {
    try {
      return await handler(args);
    } catch (error) {
      if (error instanceof HttpError) return Response.json({ error: error.message }, { status: error.status, headers: error.headers });
      if (error instanceof Response) {
        // A page helper's redirect to the sign-in page: JSON callers get 401 instead.
        if (error.status >= 300 && error.status < 400) return Response.json({ error: "Auth failed" }, { status: 401 });
        return error;
      }
      if (isThrownData(error)) {
        const message = (error.data as { message?: string } | null)?.message ?? "Error";
        return Response.json({ error: message }, { status: error.init?.status ?? 500, headers: error.init?.headers });
      }
      log.error("api error", { error: getErrorMessage(error) });
      return Response.json({ error: "Internal server error" }, { status: 500 });
    }
  };
}

const FORM_TYPES = /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i;

/** The posted form. A body of another type answers 415, one that cannot be read 400: never a 500. */
export async function readForm(request: Request): Promise<FormData> {
  const type = request.headers.get("Content-Type") ?? "";
  if (!FORM_TYPES.test(type)) throw new HttpError(415, "Send the form as application/x-www-form-urlencoded or multipart/form-data.");
  try {
    return await request.formData();
  } catch {
    throw new InvalidError("The form could not be read.");
  }
}

/** The posted JSON. Another content type answers 415, broken JSON 400 'Data format error'. */
export async function readJson(request: Request): Promise<unknown> {
  const type = request.headers.get("Content-Type") ?? "";
  if (!/^application\/json\b/i.test(type)) throw new HttpError(415, "Send JSON (Content-Type: application/json).");
  try {
    return await request.json();
  } catch {
    throw new InvalidError("Data format error");
  }
}

/** Headers of several sources as one, Set-Cookie lines kept apart. */
export function combineHeaders(...sources: (HeadersInit | null | undefined)[]): Headers {
  const combined = new Headers();
  for (const source of sources) {
    if (!source) continue;
    new Headers(source).forEach((value, key) => combined.append(key, value));
  }
  return combined;
}

/** Go there and say this: a redirect that carries a toast for the next page. */
export async function redirectWithToast(request: Request, url: string, toast: Toast, init?: ResponseInit) {
  return redirect(url, { ...init, headers: combineHeaders(init?.headers, { "Set-Cookie": await flashToast(request, toast) }) });
}

/**
 * A form refused: `{ intent, result }` (app/lib/form-answer.ts) with its status, and what else the page shows with it
 * (`more`). The page's forms read their own result with resultOf; without JavaScript the same answer renders the page.
 */
export function refused<I extends string, M extends object = object>(
  intent: I,
  result: SubmissionResult<string[]>,
  status = 400,
  more?: M,
) {
  return data({ intent, result, ...(more as M) }, { status });
}

/** A result for a form that no schema parsed (no Conform submission): its form-level message, as Conform words it. */
export const formError = (message: string): SubmissionResult<string[]> => ({ status: "error", error: { "": [message] } });
