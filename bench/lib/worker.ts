import path from "node:path";
import { appEnv, type Dataset } from "./datasets";
import { run } from "./proc";
import type { Context } from "./types";

/**
 * Runs a worker of bench/workers (TypeScript, through tsx) against a dataset, pinned to the server core, with the
 * app's environment for that dataset, and returns the JSON object it prints last. `nodeArgs` go to Node itself
 * (e.g. --expose-gc).
 */
export async function runDatasetWorker<T>(ctx: Context, ds: Dataset, worker: string, args: unknown, nodeArgs: string[] = []): Promise<T> {
  const out = await run(
    ctx.cores.server,
    process.execPath,
    [...nodeArgs, path.join(ctx.root, "node_modules/tsx/dist/cli.mjs"), path.join(ctx.root, "bench/workers", worker), JSON.stringify(args)],
    { cwd: ctx.root, env: { ...process.env, ...appEnv(ds) } },
  );
  return JSON.parse(out.trim().split("\n").pop()!) as T;
}
