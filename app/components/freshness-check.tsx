import { useRevalidator } from "@remix-run/react";
import { useEffect, useState } from "react";

export const FRESHNESS_CHECK_MS = 20_000;

/**
 * With JavaScript, an open grid asks now and then (only while the tab is visible) whether the server's copy changed:
 * its data (the scope's version: 'New Data Loaded') and its attribute filters (the values one can choose: 'New
 * Filters Loaded'), as the spec's two caches do. Update Now reloads the page's data in place; Cancel keeps the view.
 */
export function FreshnessCheck({ pagesUrl, version, filters = null }: { pagesUrl: string; version: string; filters?: string | null }) {
  const [newer, setNewer] = useState<{ version: string; filters: string | null } | null>(null);
  const [dismissed, setDismissed] = useState<{ version: string | null; filters: string | null }>({ version: null, filters: null });
  const revalidator = useRevalidator();
  useEffect(() => {
    setNewer(null);
    const check = async () => {
      if (document.visibilityState !== "visible") return;
      try {
        const res = await fetch(`${pagesUrl}&check=version&v=${encodeURIComponent(version)}`, { credentials: "same-origin" });
        if (!res.ok) return;
        const body = (await res.json()) as { version: string; filters?: string | null };
        setNewer({ version: body.version, filters: body.filters ?? null });
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
  }, [pagesUrl, version, filters]);
  const dataChanged = newer !== null && newer.version !== version && newer.version !== dismissed.version;
  const filtersChanged =
    newer !== null && filters !== null && newer.filters !== null && newer.filters !== filters && newer.filters !== dismissed.filters;
  if (!dataChanged && !filtersChanged) return null;
  return (
    <div className="toasts toasts-top">
      {dataChanged ? (
        <Offer
          title="New Data Loaded"
          update={() => revalidator.revalidate()}
          cancel={() => setDismissed((d) => ({ ...d, version: newer.version }))}
        />
      ) : null}
      {filtersChanged ? (
        <Offer
          title="New Filters Loaded"
          update={() => revalidator.revalidate()}
          cancel={() => setDismissed((d) => ({ ...d, filters: newer.filters }))}
        />
      ) : null}
    </div>
  );
}

function Offer({ title, update, cancel }: { title: string; update: () => void; cancel: () => void }) {
  return (
    <div className="toast toast-info" role="status" aria-live="polite">
      <strong>{title}</strong>
      <button type="button" className="btn btn-primary" onClick={update}>
        Update Now
      </button>
      <button type="button" className="btn" onClick={cancel}>
        Cancel
      </button>
    </div>
  );
}
