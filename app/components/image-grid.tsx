import { Form, Link } from "@remix-run/react";
import { useRef, useState } from "react";
import { useHydrated } from "remix-utils/use-hydrated";
import { ImageCard, type CardData } from "./image-card";
import { FreshnessCheck } from "./freshness-check";
import { VirtualGrid } from "./virtual-grid";

export interface GridData {
  cards: CardData[];
  next: string | null;
  prev: string | null;
  total: number;
  pos: number;
  selection: { all: boolean; ids: number[]; count: number } | null;
  version: string;
}

/**
 * The image grid. Without JavaScript: one keyset page of cards with Previous / Next links, inside a
 * form so that selection works. With JavaScript: a virtual grid over the whole set, each tick posted
 * in the background to the same action.
 */
export function ImageGrid({
  data,
  basePath,
  pageSize,
  scopeQuery,
  onOpen,
  deletable = false,
}: {
  data: GridData;
  basePath: string;
  pageSize: number;
  /** `project=1` / `board=abc`: with JavaScript the grid becomes virtual and fetches its pages itself. */
  scopeQuery: string;
  onOpen: (id: number, trigger: HTMLElement) => void;
  deletable?: boolean;
}) {
  const hydrated = useHydrated();
  const formRef = useRef<HTMLFormElement>(null);
  const { cards, total, pos, selection } = data;
  const [virtualShown, setVirtualShown] = useState<number | null>(null);
  const shown = hydrated && virtualShown !== null ? virtualShown : pos + cards.length;
  const from = basePath + (data.prev ? `?after=${data.prev}` : "");
  const isSelected = (id: number) => (selection ? (selection.all ? !selection.ids.includes(id) : selection.ids.includes(id)) : false);
  const link = (key: "after" | "before", cursor: string, at: number) => `${basePath}?${key}=${cursor}&pos=${at}`;

  const grid = hydrated ? (
    <VirtualGrid
      key={data.version}
      scopeQuery={scopeQuery}
      total={total}
      first={cards}
      startAt={pos}
      from={from}
      selection={selection}
      onOpen={onOpen}
      deletable={deletable}
      onPosition={setVirtualShown}
    />
  ) : (
    <ul className="image-grid" aria-label="Images">
      {cards.map((card) => (
        <li key={card.id}>
          <ImageCard card={card} from={from} selectable={Boolean(selection)} checked={isSelected(card.id)} onOpen={onOpen} deletable={deletable} />
          {selection ? <input type="hidden" name="page" value={card.id} /> : null}
        </li>
      ))}
    </ul>
  );

  return (
    <div className="grid-wrap">
      {hydrated ? <FreshnessCheck scopeQuery={scopeQuery} version={data.version} /> : null}
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
        <Form method="post" ref={formRef} className="grid-form">
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
      <nav className="pager" aria-label="Pages" hidden={hydrated}>
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
