import SwaggerParser from "@apidevtools/swagger-parser";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { OpenAPIV3_1 } from "openapi-types";

/**
 * Checks answers of the public API against the OpenAPI document the server serves, with tools that share nothing
 * with the code that generated it: swagger-parser validates the document itself, Ajv (JSON Schema 2020-12, OpenAPI
 * 3.1's dialect) each answer's body. An answer whose path, method or status the document does not list, or whose
 * body breaks its schema, is a failure: the document cannot drift from the code.
 */
export interface ApiChecker {
  doc: OpenAPIV3_1.Document;
  /** Fetches through the API and checks the answer; returns it with its body parsed (null when it has none). */
  call(path: string, init?: RequestInit): Promise<{ res: Response; body: any }>;
  /** Every operation some call of this checker was checked against (method and path template). */
  seen: Set<string>;
}

type Method = "get" | "post" | "put" | "patch" | "delete";

function templateOf(doc: OpenAPIV3_1.Document, pathname: string): string | null {
  for (const template of Object.keys(doc.paths ?? {})) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (pattern.test(pathname)) return template;
  }
  return null;
}

export async function apiChecker(base: string, token: () => string | null): Promise<ApiChecker> {
  const served = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as OpenAPIV3_1.Document;
  // validate() dereferences in place: it gets a copy, and the schemas are compiled from the original with its $refs.
  await SwaggerParser.validate(structuredClone(served) as never);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: "openapi.json", components: served.components } as never);
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  const validatorOf = (schema: object) => {
    const key = JSON.stringify(schema);
    let v = validators.get(key);
    if (!v) {
      const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/'));
      v = ajv.compile(rewritten);
      validators.set(key, v);
    }
    return v;
  };
  const seen = new Set<string>();
  const prefix = new URL(served.servers![0]!.url, base).pathname; // /api/v1

  async function call(path: string, init: RequestInit = {}) {
    const headers = new Headers(init.headers);
    const secret = token();
    if (secret && !headers.has("Authorization")) headers.set("Authorization", `Bearer ${secret}`);
    const res = await fetch(`${base}${prefix}${path}`, { ...init, headers, redirect: "manual" });
    const text = await res.text();
    const type = res.headers.get("Content-Type") ?? "";
    const body = text ? (/json/.test(type) ? JSON.parse(text) : text) : null;
    const pathname = new URL(`${base}${prefix}${path}`).pathname.slice(prefix.length);
    const method = (init.method ?? "GET").toLowerCase() as Method;
    const template = templateOf(served, pathname);
    const operation = template ? served.paths![template]![method] : undefined;
    if (!operation) {
      // Outside the document: only problems (the catch-all's 404, the front's refusals) may answer there.
      if (!/^application\/problem\+json/.test(type))
        throw new Error(`${method} ${pathname} is not in the document, and answered ${res.status} ${type}`);
      checkProblem(res, body);
      return { res, body };
    }
    seen.add(`${method} ${template}`);
    const documented = operation.responses?.[String(res.status)] as OpenAPIV3_1.ResponseObject | undefined;
    if (!documented)
      throw new Error(`${method} ${template} answered ${res.status}, which the document does not list: ${text.slice(0, 300)}`);
    const media = documented.content ? Object.keys(documented.content) : [];
    if (!media.length) {
      if (text) throw new Error(`${method} ${template} ${res.status} has a body the document does not describe`);
      return { res, body };
    }
    const mediaType = media.find((m) => (m.endsWith("/*") ? type.startsWith(m.slice(0, -1)) : type.startsWith(m)));
    if (!mediaType) throw new Error(`${method} ${template} ${res.status} answered ${type}, the document says ${media.join(", ")}`);
    const validate = validatorOf(documented.content![mediaType]!.schema as object);
    if (!validate(body))
      throw new Error(`${method} ${template} ${res.status} breaks its schema: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 500)}`);
    return { res, body };
  }
  return { doc: served, call, seen };
}

/** A problem document (RFC 9457) as the API answers one. */
function checkProblem(res: Response, body: any) {
  if (
    typeof body !== "object" ||
    body === null ||
    body.status !== res.status ||
    typeof body.detail !== "string" ||
    typeof body.title !== "string"
  )
    throw new Error(`not a problem document: ${JSON.stringify(body)}`);
}
