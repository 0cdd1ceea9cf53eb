import { useFetcher } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { ImagePanel, type PanelData } from "./image-panel";

export interface ImageModalState {
  id: number | null;
  open: (id: number, trigger: HTMLElement) => void;
  close: () => void;
  fetcher: ReturnType<typeof useFetcher<PanelData>>;
}

/** With JavaScript, a card's View opens the image panel over the grid instead of leaving the page. */
export function useImageModal(): ImageModalState {
  const fetcher = useFetcher<PanelData>();
  const [id, setId] = useState<number | null>(null);
  const trigger = useRef<HTMLElement | null>(null);
  const open = useCallback(
    (imageId: number, from: HTMLElement) => {
      trigger.current = from;
      setId(imageId);
      fetcher.load(`/image/${imageId}`);
    },
    [fetcher],
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
  const data = fetcher.data && fetcher.data.image?.id === id ? fetcher.data : null;
  return (
    <dialog
      ref={ref}
      className="image-modal"
      aria-labelledby="modal-image-title"
      onClose={() => id !== null && close()}
      onClick={(e) => {
        // A click on the backdrop (the dialog itself, outside its content) closes it.
        if (e.target === e.currentTarget) close();
      }}
    >
      {id !== null ? (
        <div className="image-modal-content">
          <button type="button" className="btn image-modal-close" onClick={close}>
            Close
          </button>
          {data ? (
            <ImagePanel data={data} headingId="modal-image-title" path={`/image/${id}`} />
          ) : (
            <p id="modal-image-title" role="status">
              Loading…
            </p>
          )}
        </div>
      ) : null}
    </dialog>
  );
}
