// `npm start`: build the app and serve it on the embedded defaults (SQLite and files under ./data,
// local mailbox), migrating and seeding the demo library on first start. Beside it, the demo's local OpenID
// Provider (scripts/oidc-provider.mjs), so that "Sign in with Demo SSO" works, unless OIDC_PROVIDERS is set or the
// demo is off. For a production deployment use `npm run build` and `npm run serve` with the production settings (README).
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

for (const [command, ...args] of [
  ["node_modules/.bin/remix", "vite:build"],
  [process.execPath, "scripts/build-server.mjs"],
]) {
  const build = spawnSync(command, args, { stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

// Two malloc arenas: glibc's default of eight per core kept what sharp and OCR freed as resident memory (decision 0029).
const env = {
  ...process.env,
  NODE_ENV: "production",
  KOALA_ENV: process.env.KOALA_ENV ?? "development",
  MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX || "2",
};
const children = [];
const demoSso =
  env.KOALA_ENV !== "production" && env.DEMO_SEED !== "off" && !env.OIDC_PROVIDERS && existsSync("node_modules/oidc-provider");
if (demoSso) {
  const { DEMO_SSO } = await import("./oidc-provider.mjs");
  const port = Number(env.DEMO_SSO_PORT ?? DEMO_SSO.port);
  const appUrl = env.APP_URL ?? `http://localhost:${env.PORT ?? 3000}`;
  children.push(
    spawn(process.execPath, ["scripts/oidc-provider.mjs"], {
      stdio: "inherit",
      env: { ...env, APP_URL: appUrl, DEMO_SSO_PORT: String(port) },
    }),
  );
  Object.assign(env, {
    OIDC_PROVIDERS: "demo",
    OIDC_DEMO_NAME: "Demo SSO",
    OIDC_DEMO_ISSUER: `http://127.0.0.1:${port}`,
    OIDC_DEMO_CLIENT_ID: DEMO_SSO.clientId,
    OIDC_DEMO_CLIENT_SECRET: DEMO_SSO.clientSecret,
    OIDC_DEMO_DOMAINS: "acme.example",
  });
}

// React's production build; Koala's own mode stays "development" (local mailbox, generated secret) unless set.
const child = spawn(process.execPath, ["build/server.js"], { stdio: "inherit", env });
children.push(child);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => children.forEach((c) => c.kill(signal)));
child.on("exit", (code) => {
  children.forEach((c) => c.kill("SIGTERM"));
  process.exit(code ?? 0);
});
