import { Form, Link, useFetcher } from "@remix-run/react";
import { useRef } from "react";
import { useHydrated } from "remix-utils/use-hydrated";
import { ImageCard, type CardData } from "./image-card";

export interface GridData {
  cards: CardData[];
  next: string | null;
  prev: string | null;
  total: number;
  pos: number;
  selection: { all: boolean; ids: number[]; count: number } | null;
}

/**
 * The server-rendered image grid: one keyset page of cards with Previous / Next links. It is a form,
 * so selection works without JavaScript; with JavaScript each tick is posted in the background.
 */
export function ImageGrid({ data, basePath, pageSize, onOpen }: { data: GridData; basePath: string; pageSize: number; onOpen?: (id: number, trigger: HTMLElement) => void }) {
  const hydrated = useHydrated();
  const fetcher = useFetcher();
  const formRef = useRef<HTMLFormElement>(null);
  const { cards, total, pos, selection } = data;
  const shown = pos + cards.length;
  const from = basePath + (data.prev ? `?after=${data.prev}` : "");
  const isSelected = (id: number) => (selection ? (selection.all ? !selection.ids.includes(id) : selection.ids.includes(id)) : false);
  const link = (key: "after" | "before", cursor: string, at: number) => `${basePath}?${key}=${cursor}&pos=${at}`;

  const grid = (
    <ul className="image-grid" aria-label="Images">
      {cards.map((card) => (
        <li key={card.id}>
          <ImageCard card={card} from={from} selectable={Boolean(selection)} checked={isSelected(card.id)} onOpen={onOpen} />
          {selection ? <input type="hidden" name="page" value={card.id} /> : null}
        </li>
      ))}
    </ul>
  );

  return (
    <div className="grid-wrap">
      <div className="grid-status">
        <p className="grid-count" aria-live="polite">
          {shown} / {total} images
        </p>
        <label className="grid-progress">
          <span>Image Index</span>
          <progress max={Math.max(total, 1)} value={shown} />
        </label>
        {selection ? (
          <p className="grid-selected" aria-live="polite">
            {selection.count} selected
          </p>
        ) : null}
      </div>
      {cards.length === 0 ? (
        <p className="empty">No related images found</p>
      ) : selection ? (
        <Form
          method="post"
          ref={formRef}
          className="grid-form"
          onChange={(e) => {
            if (!hydrated || !(e.target instanceof HTMLInputElement) || e.target.type !== "checkbox") return;
            const body = new FormData(formRef.current!);
            body.set("intent", "update");
            fetcher.submit(body, { method: "post" });
          }}
        >
          <div className="grid-toolbar">
            {selection.count > 0 ? (
              <button type="submit" name="intent" value="deselect-all" className="btn">
                Deselect all
              </button>
            ) : (
              <button type="submit" name="intent" value="select-all" className="btn">
                Select all
              </button>
            )}
            {hydrated ? null : (
              <button type="submit" name="intent" value="update" className="btn">
                Update selection
              </button>
            )}
          </div>
          {grid}
        </Form>
      ) : (
        grid
      )}
      <nav className="pager" aria-label="Pages">
        {data.prev ? (
          <Link to={link("before", data.prev, Math.max(0, pos - pageSize))} className="btn" rel="prev">
            Previous
          </Link>
        ) : null}
        {data.next ? (
          <Link to={link("after", data.next, shown)} className="btn" rel="next">
            Next
          </Link>
        ) : null}
      </nav>
    </div>
  );
}
