import { getErrorMessage } from "~/lib/errors";
import { pingDatabase } from "~/models/health.server";
import { storage } from "./storage.server";

export interface Readiness {
  ready: boolean;
  /** "ok", or why not, per dependency. */
  database: string;
  storage: string;
}

/** Fails with "no answer within …" when `work` takes longer than `ms` (it goes on, its answer is dropped). */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const check = (ms: number, work: () => Promise<unknown>) =>
  within(ms, work()).then(
    () => "ok",
    (error: unknown) => getErrorMessage(error),
  );

/**
 * Whether this instance can serve (`/readyz`): the database answers a query and the object store answers (the file
 * store takes a write), each within `timeoutMs`. A proxy or orchestrator sends traffic elsewhere while it cannot.
 */
export async function readiness(timeoutMs = 2000): Promise<Readiness> {
  const [database, objects] = await Promise.all([check(timeoutMs, pingDatabase), check(timeoutMs, () => storage().ping())]);
  return { ready: database === "ok" && objects === "ok", database, storage: objects };
}
