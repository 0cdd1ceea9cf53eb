// Times every better-sqlite3 statement a process runs, summed by its SQL (bound lists folded to "?…"), and writes
// the slowest to $STATEMENT_TIMES_DIR/<pid>.json when the process exits (nothing for a process that ran none). It
// reaches child processes through NODE_OPTIONS, which is how bench P9's import was split (decision 0017):
//   STATEMENT_TIMES_DIR=/tmp/st NODE_OPTIONS="--import $PWD/bench/tools/sqlite-statement-times.mjs" \
//     npm run bench -- P9 --rounds 1
// The timings are for comparing statements and commits on one machine, never a metric: the hook costs a little per
// statement (the bare side of P9, a statement per value, slows the most).
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { performance } from "node:perf_hooks";

const dir = process.env.STATEMENT_TIMES_DIR;
let Database;
try {
  // The app's own copy (the one its imports get), found from where the process runs.
  const load = createRequire(path.join(process.cwd(), "package.json"));
  Database = dir ? load("better-sqlite3") : null;
} catch {
  Database = null;
}
if (Database) {
  const totals = new Map();
  const started = performance.now();
  const shape = (sql) =>
    sql
      .replace(/\s+/g, " ")
      .replace(/(\?\s*,\s*)+\?/g, "?…")
      .replace(/\(\s*\?…\s*\)(\s*,\s*\(\s*\?…\s*\))+/g, "(?…),…")
      .slice(0, 400);
  const timeStatements = (proto) => {
    for (const method of ["run", "all", "get", "iterate"]) {
      const original = proto[method];
      proto[method] = function (...args) {
        const t = performance.now();
        try {
          return original.apply(this, args);
        } finally {
          const key = `${method} ${shape(this.source)}`;
          const entry = totals.get(key) ?? { calls: 0, ms: 0 };
          entry.calls += 1;
          entry.ms += performance.now() - t;
          totals.set(key, entry);
        }
      };
    }
  };
  // Statements are native objects: their prototype is reached through the first one prepared.
  const prepare = Database.prototype.prepare;
  let hooked = false;
  Database.prototype.prepare = function (...args) {
    const statement = prepare.apply(this, args);
    if (!hooked) timeStatements(Object.getPrototypeOf(statement));
    hooked = true;
    return statement;
  };
  process.on("exit", () => {
    if (!totals.size) return;
    const statements = [...totals].map(([sql, t]) => ({ sql, ...t })).sort((a, b) => b.ms - a.ms);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, `${process.pid}.json`),
      JSON.stringify(
        {
          argv: process.argv.slice(1).join(" ").slice(0, 500),
          wallMs: performance.now() - started,
          statementsMs: statements.reduce((sum, s) => sum + s.ms, 0),
          statements: statements.slice(0, 40),
        },
        null,
        1,
      ),
    );
  });
}
