// `npm test`: the whole suite. Type check, production build, unit + integration tests (on SQLite,
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
if (run(bin("remix"), ["vite:build"]) !== 0) fail("Build failed.");

if (!process.env.TEST_DATABASE_URL)
  process.stdout.write("\nNOTE: TEST_DATABASE_URL is not set: the PostgreSQL half of the integration suite is NOT run (SQLite only).\n");
else process.stdout.write(`\nIntegration suite runs on SQLite and on PostgreSQL (${process.env.TEST_DATABASE_URL.replace(/\/\/[^@]*@/, "//")}).\n`);

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
process.stdout.write(`\ntests: ${passed} passed, ${failed || (broken ? 1 : 0)} failed, ${skipped} skipped\n`);
process.exit(broken || failed ? 1 : 0);
