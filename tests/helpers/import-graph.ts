import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * The app's import graph, read from the source with TypeScript's own pre-processor: every `import` and `export …
 * from` of every file under the given roots, resolved to a file (`~/` is `app/`; `.js`/`.mjs` and folder indexes
 * as TypeScript resolves them). Type-only imports are kept apart: they vanish from the build, so they can make
 * neither a cycle at run time nor a dependency.
 */
export interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

const EXTENSIONS = [".ts", ".tsx", ".mts", ".mjs", ".js"];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return filesUnder(full);
    return /\.(tsx?|mjs)$/.test(name) && !name.endsWith(".d.ts") ? [full] : [];
  });
}

function resolve(root: string, from: string, spec: string): string | null {
  let base: string;
  if (spec.startsWith("~/")) base = path.join(root, "app", spec.slice(2));
  else if (spec.startsWith(".")) base = path.resolve(path.dirname(from), spec);
  else return null; // a package
  const stem = base.replace(/\.(m?js)$/, "");
  for (const candidate of [base, ...EXTENSIONS.map((e) => stem + e), ...EXTENSIONS.map((e) => path.join(base, `index${e}`))])
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return null;
}

/** Whether an import declaration brings in types only (`import type …`, or every specifier `type …`). */
function typeOnlyImports(source: ts.SourceFile): Set<string> {
  const specs = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const module = statement.moduleSpecifier;
    if (!module || !ts.isStringLiteral(module)) continue;
    let typeOnly = false;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      typeOnly =
        Boolean(clause?.isTypeOnly) ||
        Boolean(
          clause &&
          !clause.name &&
          clause.namedBindings &&
          ts.isNamedImports(clause.namedBindings) &&
          clause.namedBindings.elements.length > 0 &&
          clause.namedBindings.elements.every((e) => e.isTypeOnly),
        );
    } else typeOnly = statement.isTypeOnly;
    if (typeOnly) specs.add(module.text);
  }
  return specs;
}

export function importGraph(root: string, dirs: string[]): Edge[] {
  const edges: Edge[] = [];
  for (const file of dirs.flatMap((d) => filesUnder(path.join(root, d)))) {
    const text = readFileSync(file, "utf8");
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
    const typeOnly = typeOnlyImports(source);
    const values = new Set<string>();
    for (const statement of source.statements)
      if ((ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier)
        if (ts.isStringLiteral(statement.moduleSpecifier) && !typeOnly.has(statement.moduleSpecifier.text))
          values.add(statement.moduleSpecifier.text);
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      const to = resolve(root, file, fileName);
      if (to) edges.push({ from: path.relative(root, file), to: path.relative(root, to), typeOnly: !values.has(fileName) });
    }
  }
  return edges;
}

/** Every import circle among value imports (Tarjan's strongly connected components of more than one file, or a self-import). */
export function importCycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) if (!e.typeOnly) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** A layer: its name and the files in it (path prefixes); layers are listed bottom first. */
export interface Layer {
  name: string;
  paths: string[];
}

/** Value imports that run up from a lower layer to a higher one ("lib → models"), by the first layer each file is in. */
export function upwardImports(edges: Edge[], layers: Layer[]): string[] {
  const layerOf = (file: string) =>
    layers.findIndex((l) => l.paths.some((p) => file === p || file.startsWith(p.endsWith("/") ? p : `${p}/`)));
  const found: string[] = [];
  for (const e of edges) {
    if (e.typeOnly) continue;
    const from = layerOf(e.from);
    const to = layerOf(e.to);
    if (from >= 0 && to > from) found.push(`${e.from} (${layers[from]!.name}) → ${e.to} (${layers[to]!.name})`);
  }
  return found.sort();
}
