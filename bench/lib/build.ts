import { cpSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { run } from "./proc";

/**
 * Builds the production app (`npm run build`: the Remix build and build/server.js) and copies build/ to
 * bench/.cache/app, so that the servers under test keep running this run's build even if someone rebuilds build/
 * meanwhile. Node resolves the server's packages from the repository's node_modules (a parent folder).
 */
export async function buildApp(root: string, cache: string, log: (line: string) => void): Promise<string> {
  const started = Date.now();
  await run(null, path.join(root, "node_modules/.bin/remix"), ["vite:build"], { cwd: root });
  await run(null, process.execPath, ["scripts/build-server.mjs"], { cwd: root });
  const appDir = path.join(cache, "app");
  rmSync(appDir, { recursive: true, force: true });
  mkdirSync(appDir, { recursive: true });
  cpSync(path.join(root, "build"), path.join(appDir, "build"), { recursive: true });
  log(`  app built in ${((Date.now() - started) / 1000).toFixed(1)} s (snapshot in ${path.relative(root, appDir)})`);
  return appDir;
}

/** Builds bench/fixtures/minimal-remix (one route) with the repository's own Remix and Vite; returns its build folder. */
export async function buildMinimalRemix(root: string, cache: string): Promise<string> {
  const out = path.join(cache, "minimal-remix");
  rmSync(out, { recursive: true, force: true });
  await run(null, path.join(root, "node_modules/.bin/remix"), ["vite:build"], {
    cwd: path.join(root, "bench/fixtures/minimal-remix"),
    env: { ...process.env, MINIMAL_REMIX_OUT: out },
  });
  return out;
}
