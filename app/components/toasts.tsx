import { useEffect, useState } from "react";
import { useHydrated } from "remix-utils/use-hydrated";
import type { Toast } from "~/web/toast.server";

/**
 * The toast of this page load, from a flash cookie. It is server-rendered into a live region,
 * so it shows without JavaScript; with JavaScript it fades after a few seconds and can be dismissed.
 */
export function Toasts({ toast }: { toast: Toast | null }) {
  const [visible, setVisible] = useState<Toast | null>(toast);
  const hydrated = useHydrated();
  useEffect(() => {
    setVisible(toast);
    if (!toast) return;
    const timer = setTimeout(() => setVisible(null), 6000);
    return () => clearTimeout(timer);
  }, [toast]);
  return (
    <div className="toasts" role="status" aria-live="polite" aria-atomic="true">
      {visible ? (
        <div className={`toast toast-${visible.kind}`}>
          <strong>{visible.title}</strong>
          {visible.description ? <span>{visible.description}</span> : null}
          {hydrated ? (
            <button type="button" className="toast-close" aria-label="Dismiss" onClick={() => setVisible(null)}>
              ×
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
