import { useRevalidator } from "@remix-run/react";
import { useEffect, useState } from "react";

export const FRESHNESS_CHECK_MS = 20_000;

/**
 * With JavaScript, an open grid asks now and then (only while the tab is visible) whether the
 * server's copy changed; if so it offers the spec's 'New Data Loaded' toast. Update Now reloads
 * the data in place; Cancel keeps the current view.
 */
export function FreshnessCheck({ pagesUrl, version }: { pagesUrl: string; version: string }) {
  const [newer, setNewer] = useState<string | null>(null);
  const [dismissed, setDismissed] = useState<string | null>(null);
  const revalidator = useRevalidator();
  useEffect(() => {
    setNewer(null);
    const check = async () => {
      if (document.visibilityState !== "visible") return;
      try {
        const res = await fetch(`${pagesUrl}&check=version`, { credentials: "same-origin" });
        if (!res.ok) return;
        const body = (await res.json()) as { version: string };
        if (body.version !== version) setNewer(body.version);
      } catch {
        /* offline: try at the next tick */
      }
    };
    const timer = setInterval(check, FRESHNESS_CHECK_MS);
    const onVisible = () => void check();
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [pagesUrl, version]);
  if (!newer || newer === dismissed) return null;
  return (
    <div className="toasts toasts-top" role="status" aria-live="polite">
      <div className="toast toast-info">
        <strong>New Data Loaded</strong>
        <button type="button" className="btn btn-primary" onClick={() => revalidator.revalidate()}>
          Update Now
        </button>
        <button type="button" className="btn" onClick={() => setDismissed(newer)}>
          Cancel
        </button>
      </div>
    </div>
  );
}
