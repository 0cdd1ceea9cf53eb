import type { Listener } from "~/db/listener.server";
import { listenForJobs } from "~/models/jobs.server";

/**
 * What wakes an idle runner before its next poll: a job queued in this process (`wakeRunners`), and on PostgreSQL a
 * job queued by any instance (its NOTIFY, heard by this process's one LISTEN session). Polling stays the safety net:
 * a notification lost while the session was down costs a poll interval at most.
 */
const wakers = new Set<() => void>();
let listener: Listener | null = null;

/** Wakes this process's idle runners (after a model queued a job inside its own transaction: run it now). */
export function wakeRunners() {
  for (const wake of wakers) wake();
}

/**
 * Registers a runner's `wake`; what it returns unregisters it. The first runner of the process opens the LISTEN
 * session and the last one closes it, so a process holds one whatever its runners, and none once they stopped.
 */
export function onWake(wake: () => void): () => Promise<void> {
  wakers.add(wake);
  if (wakers.size === 1) listener = listenForJobs(wakeRunners);
  return async () => {
    if (!wakers.delete(wake) || wakers.size > 0 || !listener) return;
    const closing = listener;
    listener = null;
    await closing.close();
  };
}
