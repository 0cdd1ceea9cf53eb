import type { MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { openApiDocument } from "./api.v1+/openapi.server";

export const meta: MetaFunction = () => [{ title: "API reference | Koala" }];

interface JsonSchema {
  type?: string | string[];
  $ref?: string;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  description?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  format?: string;
}
interface Operation {
  operationId: string;
  summary: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; schema: JsonSchema; description?: string }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: JsonSchema }> }>;
}
interface Doc {
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> };
}

/** The API reference, rendered on the server from the OpenAPI document itself (so it says what the API does). */
export const loader = async () => ({ doc: openApiDocument() as Doc });

const refName = (ref: string) => ref.split("/").pop()!;

/** A schema in a few words: `string`, `integer`, `Board[]`, `"read" | "write"`. */
function typeOf(s: JsonSchema | undefined): string {
  if (!s) return "any";
  if (s.$ref) return refName(s.$ref);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.anyOf) return s.anyOf.map(typeOf).join(" or ");
  const t = Array.isArray(s.type) ? s.type.join(" | ") : (s.type ?? "any");
  if (t === "array") return `${typeOf(s.items)}[]`;
  return s.format ? `${t} (${s.format})` : t;
}

function limits(s: JsonSchema): string {
  const parts = [
    s.minLength !== undefined ? `at least ${s.minLength} characters` : null,
    s.maxLength !== undefined ? `at most ${s.maxLength} characters` : null,
    s.minimum !== undefined ? `from ${s.minimum}` : null,
    s.maximum !== undefined ? `to ${s.maximum}` : null,
    s.default !== undefined ? `default ${JSON.stringify(s.default)}` : null,
  ].filter(Boolean);
  return [s.description, parts.join(", ")].filter(Boolean).join(". ");
}

const anchor = (name: string) => `schema-${name}`;

function TypeLink({ schema }: { schema: JsonSchema | undefined }) {
  const name = schema?.$ref ? refName(schema.$ref) : schema?.items?.$ref ? refName(schema.items.$ref) : null;
  if (!name) return <code>{typeOf(schema)}</code>;
  return (
    <a href={`#${anchor(name)}`}>
      <code>{typeOf(schema)}</code>
    </a>
  );
}

function Properties({ schema, id }: { schema: JsonSchema; id: string }) {
  const entries = Object.entries(schema.properties ?? {});
  if (!entries.length) return <p>{typeOf(schema)}</p>;
  return (
    <div className="table-scroll">
      <table aria-labelledby={id}>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Type</th>
            <th scope="col">Required</th>
            <th scope="col">Notes</th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([name, s]) => (
            <tr key={name}>
              <th scope="row">
                <code>{name}</code>
              </th>
              <td>
                <TypeLink schema={s} />
              </td>
              <td>{schema.required?.includes(name) ? "yes" : "no"}</td>
              <td>{limits(s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default function ApiDocs() {
  const { doc } = useLoaderData<typeof loader>();
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
  return (
    <main id="main" className="api-docs settings-page">
      <h1>
        {doc.info.title} {doc.info.version}
      </h1>
      <p>{doc.info.description}</p>
      <h2>Using it</h2>
      <ul>
        <li>
          Make a token in your profile (<a href="/profile/tokens">Access tokens</a>) and send it with every request:{" "}
          <code>Authorization: Bearer koala_pat_…</code>. A token reads, or also writes, in all your projects or the ones you chose; your
          role in each project still applies.
        </li>
        <li>
          Addresses start at <code>/api/v1</code>. Bodies are JSON; a field the API does not know is refused.
        </li>
        <li>
          Errors are <code>application/problem+json</code> (RFC 9457): <code>detail</code> says what went wrong, <code>errors</code> which
          field. Anything the token cannot reach is <code>404</code>.
        </li>
        <li>
          Each token has a budget of requests per minute: every answer says what is left in <code>RateLimit-Remaining</code>; past it,{" "}
          <code>429</code> with <code>Retry-After</code>.
        </li>
        <li>
          Lists of images come a page at a time: pass the page&apos;s <code>next</code> as <code>after</code> for the next one.
        </li>
        <li>
          The machine-readable description: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1), for client generators.
        </li>
      </ul>
      <h2>Operations</h2>
      <ul>
        {operations.map(({ path, method, op }) => (
          <li key={op.operationId}>
            <a href={`#${op.operationId}`}>
              {method} {path}
            </a>{" "}
            — {op.summary}
          </li>
        ))}
      </ul>
      {operations.map(({ path, method, op }) => {
        const body = op.requestBody?.content["application/json"]?.schema;
        return (
          <section key={op.operationId} aria-labelledby={op.operationId} className="api-operation">
            <h3 id={op.operationId}>
              <code>
                {method} /api/v1{path}
              </code>
            </h3>
            <p>{op.summary}.</p>
            {op.parameters?.length ? (
              <>
                <h4>Parameters</h4>
                <ul>
                  {op.parameters.map((p) => (
                    <li key={`${p.in}-${p.name}`}>
                      <code>{p.name}</code> ({p.in}, {typeOf(p.schema)}
                      {p.required ? ", required" : ""}){limits(p.schema) || p.description ? `: ${limits(p.schema) || p.description}` : ""}
                    </li>
                  ))}
                </ul>
              </>
            ) : null}
            {body ? (
              <p>
                Body: <TypeLink schema={body} />
              </p>
            ) : null}
            <h4>Answers</h4>
            <ul>
              {Object.entries(op.responses).map(([status, r]) => {
                const schema = Object.values(r.content ?? {})[0]?.schema;
                return (
                  <li key={status}>
                    <code>{status}</code> {r.description}
                    {schema ? (
                      <>
                        {" "}
                        (<TypeLink schema={schema} />)
                      </>
                    ) : null}
                  </li>
                );
              })}
            </ul>
          </section>
        );
      })}
      <h2>Shapes</h2>
      {Object.entries(doc.components.schemas).map(([name, schema]) => (
        <section key={name} aria-labelledby={anchor(name)}>
          <h3 id={anchor(name)}>{name}</h3>
          {schema.description ? <p>{schema.description}</p> : null}
          <Properties schema={schema} id={anchor(name)} />
        </section>
      ))}
    </main>
  );
}
