import { useFetcher } from "@remix-run/react";
import { lazy, Suspense, useCallback, useEffect, useRef, useState } from "react";
import type { PanelData } from "./image-panel";

// The panel's code comes with the first image opened, not with the grid page (bench P8a); `open` asks for it at
// once, so it arrives while the image's data does.
const loadPanel = () => import("./image-panel");
const ImagePanel = lazy(() => loadPanel().then((m) => ({ default: m.ImagePanel })));

export interface ImageModalState {
  id: number | null;
  open: (id: number, trigger: HTMLElement) => void;
  close: () => void;
  fetcher: ReturnType<typeof useFetcher<PanelData>>;
}

/**
 * With JavaScript, a card's View opens the image panel over the grid instead of leaving the page. `board`: the
 * board the grid shows, so the panel offers Remove from this board.
 */
export function useImageModal(board?: string): ImageModalState {
  const fetcher = useFetcher<PanelData>();
  const [id, setId] = useState<number | null>(null);
  const trigger = useRef<HTMLElement | null>(null);
  const open = useCallback(
    (imageId: number, from: HTMLElement) => {
      trigger.current = from;
      // Not there (a new release removed the file): the image route's module, which holds the panel too, fails to
      // load for the fetcher as well, and Remix reloads the page (seen in Playwright with the file's requests aborted).
      loadPanel().catch(() => {});
      setId(imageId);
      fetcher.load(`/image/${imageId}${board ? `?board=${encodeURIComponent(board)}` : ""}`);
    },
    [fetcher, board],
  );
  const close = useCallback(() => {
    setId(null);
    // Focus goes back to the card that opened the panel.
    requestAnimationFrame(() => trigger.current?.focus());
  }, []);
  return { id, open, close, fetcher };
}

export function ImageModal({ state }: { state: ImageModalState }) {
  const ref = useRef<HTMLDialogElement>(null);
  const { id, close, fetcher } = state;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (id !== null && !dialog.open) dialog.showModal();
    if (id === null && dialog.open) dialog.close();
  }, [id]);
  // A click on the backdrop (the dialog itself, outside its content) closes it; Escape closes it natively.
  useEffect(() => {
    const dialog = ref.current;
    const onClick = (e: MouseEvent) => {
      if (e.target === dialog) close();
    };
    dialog?.addEventListener("click", onClick);
    return () => dialog?.removeEventListener("click", onClick);
  }, [close]);
  const data = fetcher.data && fetcher.data.image?.id === id ? fetcher.data : null;
  const loading = (
    <p id="modal-image-title" role="status">
      Loading…
    </p>
  );
  return (
    <dialog ref={ref} className="image-modal" aria-labelledby="modal-image-title" onClose={() => id !== null && close()}>
      {id !== null ? (
        <div className="image-modal-content">
          <button type="button" className="btn image-modal-close" onClick={close}>
            Close
          </button>
          {data ? (
            <Suspense fallback={loading}>
              <ImagePanel data={data} headingId="modal-image-title" path={`/image/${id}`} />
            </Suspense>
          ) : (
            loading
          )}
        </div>
      ) : null}
    </dialog>
  );
}
