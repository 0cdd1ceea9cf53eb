import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The project's own lint rules, run through the real configuration (eslint.config.js) on code written for the test,
 * as if it were a file at the given path: each rule must fail the code it exists to refuse, and let the rest pass.
 */
const eslint = new ESLint();
async function problems(filePath: string, code: string) {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.line}:${m.ruleId}`);
}

describe("lint: renders are pure (koala/no-impure-render)", () => {
  const component = `
let visits = 0;
export function Shelf({ items }: { items: number[] }) {
  visits += 1;
  const rows = items.map((i) => <li key={i}>{Math.random()}</li>);
  return (
    <button type="button" onClick={() => window.alert(String(Date.now()))}>
      {new Date().toISOString()} {rows} {visits}
    </button>
  );
}
export default function Page() {
  const stamp = Date.now();
  function onSubmit() {
    return crypto.randomUUID();
  }
  return <form onSubmit={onSubmit}>{stamp}</form>;
}
`;

  it("refuses the clock, randomness and module state in a component's render, and allows them in handlers", async () => {
    expect(await problems("app/components/shelf.tsx", component)).toEqual([
      "2:koala/no-impure-render", // module-level let
      "5:koala/no-impure-render", // Math.random() in a .map callback, while rendering
      "8:koala/no-impure-render", // new Date()
      "13:koala/no-impure-render", // Date.now() in a route's default export
    ]);
  });

  it("applies to route modules, and not to server modules or loaders", async () => {
    expect(await problems("app/routes/_app.shelf.tsx", component)).toHaveLength(4);
    const loader = `export async function loader() {\n  return { now: Date.now(), id: Math.random() };\n}\n`;
    expect(await problems("app/routes/_app.shelf.tsx", loader)).toEqual([]);
    const server = `let calls = 0;\nexport function Stamp() {\n  calls += 1;\n  return { at: Date.now(), calls };\n}\n`;
    expect(await problems("app/models/shelf.server.ts", server)).toEqual([]);
    expect(await problems("app/components/stamp.tsx", server)).toEqual(["1:koala/no-impure-render", "4:koala/no-impure-render"]);
  });
});

describe("lint: imports run down the layers (@typescript-eslint/no-restricted-imports)", () => {
  const rule = "@typescript-eslint/no-restricted-imports";
  const layered = async (filePath: string, code: string) => (await problems(filePath, code)).filter((p) => p.endsWith(rule));

  it("refuses a model importing a service, a leaf importing a model, a migration importing app code, a component importing the server", async () => {
    expect(await layered("app/models/shelf.server.ts", `import { queue } from "~/services/jobs.server";\nvoid queue;\n`)).toEqual([
      `1:${rule}`,
    ]);
    expect(
      await layered("app/models/shelf.server.ts", `import { readSelection } from "../web/selection.server";\nvoid readSelection;\n`),
    ).toEqual([`1:${rule}`]);
    expect(await layered("app/lib/shelf.ts", `import { db } from "~/db/connection.server";\nvoid db;\n`)).toEqual([`1:${rule}`]);
    expect(await layered("app/db/migrations/099-shelf.server.ts", `import { fold } from "~/lib/keywords-query";\nvoid fold;\n`)).toEqual([
      `1:${rule}`,
    ]);
    expect(
      await layered("app/services/shelf.server.ts", `import { requireActor } from "~/sessions.server";\nvoid requireActor;\n`),
    ).toEqual([`1:${rule}`]);
    expect(await layered("app/components/shelf.tsx", `import { gridPage } from "~/models/grid.server";\nvoid gridPage;\n`)).toEqual([
      `1:${rule}`,
    ]);
  });

  it("lets imports run down, and types come from anywhere", async () => {
    expect(await layered("app/services/shelf.server.ts", `import { db } from "~/db/connection.server";\nvoid db;\n`)).toEqual([]);
    expect(await layered("app/routes/_app+/shelf.tsx", `import { queue } from "~/services/jobs.server";\nvoid queue;\n`)).toEqual([]);
    expect(
      await layered("app/models/shelf.server.ts", `import type { Runner } from "~/services/jobs.server";\nexport type R = Runner;\n`),
    ).toEqual([]);
    expect(
      await layered("app/components/shelf.tsx", `import type { GridCard } from "~/models/grid.server";\nexport type C = GridCard;\n`),
    ).toEqual([]);
    expect(
      await layered("app/models/shelf.server.ts", `import { revokeSession } from "./sessions.server";\nvoid revokeSession;\n`),
    ).toEqual([]);
  });
});
