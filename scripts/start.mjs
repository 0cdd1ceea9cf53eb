// `npm start`: build the app and serve it on the embedded defaults (SQLite and files under ./data,
// local mailbox), migrating and seeding the demo library on first start. For a production
// deployment use `npm run build` and `npm run serve` with the production settings (README).
import { spawn, spawnSync } from "node:child_process";

for (const [command, ...args] of [
  ["node_modules/.bin/remix", "vite:build"],
  [process.execPath, "scripts/build-server.mjs"],
]) {
  const build = spawnSync(command, args, { stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const child = spawn(process.execPath, ["build/server.js"], {
  stdio: "inherit",
  // React's production build; Koala's own mode stays "development" (local mailbox, generated secret) unless set.
  env: { ...process.env, NODE_ENV: "production", KOALA_ENV: process.env.KOALA_ENV ?? "development" },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));
