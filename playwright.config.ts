import { defineConfig } from "@playwright/test";
import type { E2eOptions } from "./tests/e2e/fixtures";
import { E2E_PORT, PG_URL, targetFor } from "./tests/e2e/targets";

export { E2E_PORT };

const TRACE_MODES = ["off", "on", "retain-on-failure", "on-first-retry", "retain-on-first-failure", "on-all-retries"] as const;
function traceMode(asked: string | undefined): (typeof TRACE_MODES)[number] {
  if (asked === undefined || asked === "") return "off";
  const mode = TRACE_MODES.find((m) => m === asked);
  if (!mode) throw new Error(`E2E_TRACE=${asked}: use one of ${TRACE_MODES.join(", ")}`);
  return mode;
}

const sqlite = targetFor("sqlite");

/**
 * End-to-end tests against the built app (global-setup starts it with a real SMTP server), in the system
 * Chromium, each test once with JavaScript and once without. With TEST_DATABASE_URL the tests tagged @core
 * also run against a second server on PostgreSQL (projects js-pg and nojs-pg); without it those projects do
 * not exist, and global-setup says so.
 */
export default defineConfig<E2eOptions>({
  testDir: "tests/e2e",
  globalSetup: "./tests/e2e/global-setup.ts",
  fullyParallel: true,
  workers: process.env.E2E_WORKERS ? Number(process.env.E2E_WORKERS) : 2,
  retries: 0,
  // Sized for a busy 2-core machine: the longest flows (several pages, each checked by axe) take ~17 s alone on an idle
  // one, 35–46 s with both workers running while the machine did other work (five of them passed 45 s in one such run).
  timeout: 90_000,
  expect: { timeout: 10_000 },
  reporter: [["list"], ["json", { outputFile: "reports/e2e.json" }]],
  use: {
    baseURL: sqlite.baseURL,
    target: "sqlite",
    // Off unless asked for (E2E_TRACE=retain-on-failure npm run test:e2e): recording every test's trace made the
    // suite about a fifth slower, for files only someone at this machine can open.
    trace: traceMode(process.env.E2E_TRACE),
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  // A test about what JavaScript adds (tagged @js-only) has no no-JS counterpart to run: the nojs projects leave it
  // out rather than skip it.
  projects: [
    { name: "js", use: { javaScriptEnabled: true } },
    { name: "nojs", grepInvert: /@js-only/, use: { javaScriptEnabled: false } },
    ...(PG_URL
      ? (["js-pg", "nojs-pg"] as const).map((name) => ({
          name,
          grep: /@core/,
          ...(name === "nojs-pg" ? { grepInvert: /@js-only/ } : {}),
          use: { javaScriptEnabled: name === "js-pg", target: "postgres" as const, baseURL: targetFor("postgres").baseURL },
        }))
      : []),
  ],
});
