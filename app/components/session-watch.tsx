import { useNavigation } from "@remix-run/react";
import { useEffect, useRef } from "react";

export const SESSION_CHECK_MS = 5_000;

/**
 * The spec's periodic session check: every 5 s while the tab is visible, a HEAD-sized request
 * to /auth/check; a signed-out tab goes to /login and comes back here afterwards.
 */
export function SessionWatch() {
  // While a navigation is under way its own loaders decide where the user goes (signing out, for one, answers 401 here).
  const state = useNavigation().state;
  const navigating = useRef(false);
  useEffect(() => {
    navigating.current = state !== "idle";
  }, [state]);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const aborter = new AbortController();
    const check = async () => {
      if (document.visibilityState !== "visible") return;
      try {
        const res = await fetch("/auth/check", { credentials: "same-origin", cache: "no-store", signal: aborter.signal });
        // A check that comes back after the page left the signed-in layout (after "Sign out", say) must not send the
        // next page to /login?redirectTo=<that page>.
        if (stopped || navigating.current) return;
        if (res.status === 401) {
          stopped = true;
          const back = window.location.pathname + window.location.search;
          window.location.assign(`/login?redirectTo=${encodeURIComponent(back)}`);
        }
      } catch {
        /* offline: try again at the next tick */
      }
    };
    const schedule = () => {
      if (!stopped) timer = setTimeout(async () => (await check(), schedule()), SESSION_CHECK_MS);
    };
    const onVisible = () => {
      if (document.visibilityState === "visible") void check();
    };
    schedule();
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      stopped = true;
      aborter.abort();
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, []);
  return null;
}
