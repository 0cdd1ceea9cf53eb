// `npm test`: the whole suite. Type check, lint and format check, production build, unit + integration tests (on SQLite,
// and on PostgreSQL when TEST_DATABASE_URL is set), then the Playwright e2e tests against the build.
// Ends with one line: "tests: N passed, N failed, N skipped".
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";

const bin = (name) => `node_modules/.bin/${name}`;
const run = (cmd, args, extraEnv = {}) => {
  process.stdout.write(`\n$ ${[cmd, ...args].join(" ")}\n`);
  return spawnSync(cmd, args, { stdio: "inherit", env: { ...process.env, ...extraEnv } }).status ?? 1;
};
const fail = (message) => {
  process.stderr.write(`\n${message}\n`);
  process.exit(1);
};

mkdirSync("reports", { recursive: true });
const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(chromium)) fail(`The e2e tests need Chromium at ${chromium}: apt-get install chromium (or set CHROMIUM_PATH).`);

if (run(bin("tsc"), ["--noEmit"]) !== 0) fail("Type check failed.");
if (run(bin("eslint"), ["."]) !== 0) fail("Lint failed (npx eslint . to see it).");
if (run(bin("prettier"), ["--check", "."]) !== 0) fail("Formatting differs: npm run format.");
if (run(bin("remix"), ["vite:build"]) !== 0 || run("node", ["scripts/build-server.mjs"]) !== 0) fail("Build failed.");

if (!process.env.TEST_DATABASE_URL)
  process.stdout.write(
    "\nNOTE: TEST_DATABASE_URL is not set: the PostgreSQL half of the integration suite and the e2e core flows on PostgreSQL (js-pg, nojs-pg) are NOT run (SQLite only).\n",
  );
else
  process.stdout.write(
    `\nIntegration suite and the e2e core flows (@core) run on SQLite and on PostgreSQL (${process.env.TEST_DATABASE_URL.replace(/\/\/[^@]*@/, "//")}).\n`,
  );

const unitStatus = run(bin("vitest"), ["run", "--reporter=default", "--reporter=json", "--outputFile.json=reports/vitest.json"]);
const e2eStatus = run(bin("playwright"), ["test"]);

const read = (file) => {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
};
const v = read("reports/vitest.json");
const p = read("reports/e2e.json");
const passed = (v?.numPassedTests ?? 0) + (p?.stats?.expected ?? 0);
const failed = (v?.numFailedTests ?? 0) + (p?.stats?.unexpected ?? 0) + (p?.stats?.flaky ?? 0);
const skipped = (v?.numPendingTests ?? 0) + (v?.numTodoTests ?? 0) + (p?.stats?.skipped ?? 0);
const broken = unitStatus !== 0 || e2eStatus !== 0;

// CI logs are often read from their tail: name every failure again there, with the first line of its reason.
const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
const firstLine = (text) =>
  (
    String(text ?? "")
      .replace(ansi, "")
      .split("\n")
      .find((line) => line.trim()) ?? ""
  ).trim();
const failures = [];
for (const file of v?.testResults ?? []) {
  if (file.status === "failed" && !file.assertionResults?.some((t) => t.status === "failed"))
    failures.push(`vitest ${file.name}: ${firstLine(file.message)}`);
  for (const t of file.assertionResults ?? [])
    if (t.status === "failed") failures.push(`vitest ${file.name} › ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
}
const walk = (suite, trail) => {
  for (const spec of suite.specs ?? [])
    for (const t of spec.tests ?? [])
      if (t.status === "unexpected" || t.status === "flaky") {
        const error = t.results?.find((r) => r.error)?.error?.message;
        failures.push(
          `playwright [${t.projectName}] ${spec.file}:${spec.line} › ${[...trail, spec.title].join(" › ")} (${t.status}): ${firstLine(error)}`,
        );
      }
  for (const child of suite.suites ?? []) walk(child, suite.title && !suite.title.endsWith(".ts") ? [...trail, suite.title] : trail);
};
for (const suite of p?.suites ?? []) walk(suite, []);
for (const error of p?.errors ?? []) failures.push(`playwright: ${firstLine(error.message)}`);
if (failures.length) process.stdout.write(`\nFailed:\n${failures.map((f) => `  ${f.slice(0, 400)}`).join("\n")}\n`);
process.stdout.write(`\ntests: ${passed} passed, ${failed || (broken ? 1 : 0)} failed, ${skipped} skipped\n`);
process.exit(broken || failed ? 1 : 0);
