import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { STATUS_CODES } from "node:http";
import type { z, ZodTypeAny } from "zod";
import { config } from "~/config.server";
import { getErrorMessage, HttpError } from "~/lib/errors";
import { log } from "~/lib/log.server";
import type { Actor } from "~/models/actor";
import { tokenActor } from "~/models/api-tokens.server";
import { recordAudit } from "~/models/audit.server";
import { BatchedRateLimit } from "~/models/rate-limits.server";

/**
 * The public API's one request path (docs/api.md): the bearer token resolved into an actor narrowed by its grant
 * (cookies are never read here, and tokens never work on the pages: they read only the session cookie), the token's
 * rate limit, the method's handler, and every failure answered as `application/problem+json` (RFC 9457) whose
 * `detail` is the spec's message. Outside the token's reach is 404, as on the pages.
 */
export interface ApiRequest {
  request: Request;
  params: LoaderFunctionArgs["params"];
  url: URL;
  actor: Actor;
}
type Method = "GET" | "POST" | "PATCH" | "DELETE";
type Handler = (r: ApiRequest) => Promise<Response>;
/** A route's handlers by method. */
export type Methods = Partial<Record<Method, Handler>>;

export const PROBLEM = "application/problem+json";
const REALM = 'Bearer realm="koala"';

/** A failure with RFC 9457's extension members (`errors`: what was wrong with which field). */
export class ApiProblem extends HttpError {
  constructor(
    status: number,
    detail: string,
    readonly extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(status, detail, headers);
  }
}

export function problem(status: number, detail: string, extra: Record<string, unknown> = {}, headers: HeadersInit = {}) {
  const body = { type: "about:blank", title: STATUS_CODES[status] ?? "Error", status, detail, ...extra };
  const h = new Headers(headers);
  h.set("Content-Type", PROBLEM);
  h.set("Cache-Control", "no-store");
  return new Response(JSON.stringify(body), { status, headers: h });
}

const bearer = (request: Request) => /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.get("Authorization") ?? "")?.[1] ?? null;

async function authenticate(request: Request, ip: string | null): Promise<Actor> {
  const secret = bearer(request);
  if (!secret) throw new ApiProblem(401, "Send a personal access token: Authorization: Bearer <token>.", {}, { "WWW-Authenticate": REALM });
  const actor = await tokenActor(secret, ip);
  if (!actor)
    throw new ApiProblem(401, "The token is unknown, revoked or expired.", {}, { "WWW-Authenticate": `${REALM}, error="invalid_token"` });
  return actor;
}

/** Every token's count this minute, shared by the instances (written in batches: most requests write nothing). */
const tokenLimits = new BatchedRateLimit();

/** The token's budget for this minute: the `RateLimit-*` fields on every answer, 429 past it. */
async function spend(actor: Actor): Promise<Record<string, string>> {
  const limit = config().api.ratePerMinute;
  const hit = await tokenLimits.hit(`api:${actor.grant!.tokenId}`, limit, 60_000);
  const headers = {
    "RateLimit-Limit": String(limit),
    "RateLimit-Remaining": String(Math.max(0, limit - hit.count)),
    "RateLimit-Reset": String(hit.retryAfterSeconds),
    "RateLimit-Policy": `${limit};w=60`,
  };
  if (!hit.allowed)
    throw new ApiProblem(
      429,
      `Too many requests for this token. Please wait ${hit.retryAfterSeconds} seconds and try again.`,
      {},
      {
        ...headers,
        "Retry-After": String(hit.retryAfterSeconds),
      },
    );
  return headers;
}

function answerFor(error: unknown): Response {
  if (error instanceof ApiProblem) return problem(error.status, error.message, error.extra, error.headers);
  if (error instanceof HttpError) return problem(error.status, error.message, {}, error.headers);
  log.error("api error", { error: getErrorMessage(error) });
  return problem(500, "Internal server error");
}

/**
 * A route's handlers by method, as its `loader` and its `action` (each `endpoint(methods)`: spelt out, so that the
 * build strips both, and the server code they hold, from the browser's bundle). A method it has no handler for
 * answers 405 with `Allow`.
 */
export function endpoint(handlers: Methods) {
  const allow = Object.keys(handlers).join(", ");
  return async ({ request, params, context }: LoaderFunctionArgs | ActionFunctionArgs): Promise<Response> => {
    const method = (request.method === "HEAD" ? "GET" : request.method) as Method;
    const ip = (context as { clientIp?: string } | undefined)?.clientIp || null;
    let rate: Record<string, string> = {};
    let actor: Actor | null = null;
    let ran = false;
    let response: Response;
    try {
      actor = await authenticate(request, ip);
      rate = await spend(actor);
      const handler = handlers[method];
      if (!handler) throw new ApiProblem(405, `${request.method} is not allowed here.`, {}, { Allow: allow });
      ran = true;
      response = await handler({ request, params, url: new URL(request.url), actor });
    } catch (error) {
      response = answerFor(error);
    }
    for (const [name, value] of Object.entries(rate)) response.headers.set(name, value);
    // What a write did, or why it was refused; not what never reached a handler (over the limit, an unknown method),
    // so that a refused flood cannot grow the log.
    if (actor && ran && method !== "GET") await auditWrite(actor, request, response.status);
    return response;
  };
}

/** Every change a token's request asks of a handler is in the audit log, done or refused: which token, what, the answer. */
async function auditWrite(actor: Actor, request: Request, status: number) {
  await recordAudit({
    action: "api.write",
    actorUserId: actor.id,
    ip: actor.ip ?? null,
    subject: `api_token:${actor.grant!.tokenId}`,
    detail: { method: request.method, path: new URL(request.url).pathname.slice(0, 200), status },
  });
}

/** The field errors of a schema's refusal, as `errors` (RFC 9457 extension): where, and what was wrong. */
const fieldErrors = (error: z.ZodError) =>
  error.issues.slice(0, 20).map((i) => ({
    pointer: `/${i.path.join("/")}`,
    detail: i.code === "unrecognized_keys" ? `Unknown field${i.keys.length > 1 ? "s" : ""}: ${i.keys.join(", ")}` : i.message,
  }));

/** The JSON body, parsed by `schema` (objects in it strict: an unknown field is refused, never ignored). */
export async function readBody<S extends ZodTypeAny>(request: Request, schema: S): Promise<z.output<S>> {
  if (!/^application\/json\b/i.test(request.headers.get("Content-Type") ?? ""))
    throw new ApiProblem(415, "Send JSON (Content-Type: application/json).");
  let raw: unknown;
  try {
    raw = await request.json();
  } catch {
    throw new ApiProblem(400, "Data format error");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalid(parsed.error);
  return parsed.data;
}

/** 400 with the first field's message as `detail` (the pages' own words, "Board name must be 3 to 64 characters"). */
const invalid = (error: z.ZodError) => {
  const errors = fieldErrors(error);
  return new ApiProblem(400, errors[0]?.detail ?? "Data format error", { errors });
};

/** The query string, parsed by `schema` (a parameter given twice is read as its list). */
export function readQuery<S extends ZodTypeAny>(url: URL, schema: S): z.output<S> {
  const raw: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    raw[key] = all.length > 1 ? all : all[0]!;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalid(parsed.error);
  return parsed.data;
}

/**
 * A JSON answer; with an `etag`, a matching If-None-Match gets 304. The body as bytes with their length: a third
 * cheaper than Response.json's stream of a string (bench P13b).
 */
export function reply(request: Request, body: unknown, init: { status?: number; etag?: string; headers?: HeadersInit } = {}) {
  const headers = new Headers(init.headers);
  headers.set("Cache-Control", "private, no-cache");
  if (init.etag) {
    headers.set("ETag", init.etag);
    if (request.headers.get("If-None-Match") === init.etag) return new Response(null, { status: 304, headers });
  }
  const bytes = Buffer.from(JSON.stringify(body));
  headers.set("Content-Type", "application/json");
  headers.set("Content-Length", String(bytes.length));
  return new Response(bytes, { status: init.status ?? 200, headers });
}

export const noContent = () => new Response(null, { status: 204 });
