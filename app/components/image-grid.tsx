import { Form, Link, useNavigation } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { HIDE_AFTER_MS, useMenu } from "./menu";
import { useHydrated } from "remix-utils/use-hydrated";
import { ImageCard, type CardData, type CardLinks, type CardsIn } from "./image-card";
import { StaticCards } from "./static-cards";
import { FreshnessCheck } from "./freshness-check";
import { IMAGES_TARGET } from "./skip-links";
import { VirtualGrid } from "./virtual-grid";
import { NoteFocusOnLeave, useFocusHandoff } from "./focus-handoff";
import type { BulkItem } from "~/lib/bulk-ops";

export interface SelectionData {
  all: boolean;
  ids: number[];
  count: number;
}

export interface GridData {
  cards: CardData[];
  next: string | null;
  prev: string | null;
  total: number;
  pos: number;
  selection: SelectionData | null;
  version: string;
}

const pickedIn = (s: { all: boolean; ids: number[] }, id: number) => (s.all ? !s.ids.includes(id) : s.ids.includes(id));

/**
 * With JavaScript, ticks are posted in the background to /api/selection (plain fetch: no navigation and no
 * revalidation, so scroll and focus stay), one request per change; changes made while one is on its way go
 * together in the next. The boxes show the server's last answer with the unanswered changes laid over it.
 */
function useBackgroundSelection(fromLoader: SelectionData | null, scopeQuery: string) {
  const [base, setBase] = useState(fromLoader);
  const [overlay, setOverlay] = useState<Map<number, boolean>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const unsent = useRef(new Map<number, boolean>());
  const busy = useRef(false);

  useEffect(() => {
    setBase(fromLoader);
    setOverlay(new Map(unsent.current));
  }, [fromLoader]);

  const flush = useCallback(async () => {
    if (busy.current || !unsent.current.size) return;
    const sending = unsent.current;
    unsent.current = new Map();
    const body = new FormData();
    body.set("intent", "update");
    for (const [id, on] of sending) {
      body.append("page", String(id));
      if (on) body.append("ids", String(id));
    }
    busy.current = true;
    try {
      const res = await fetch(`/api/selection?${scopeQuery}`, { method: "POST", body, credentials: "same-origin" });
      const answer = res.ok ? ((await res.json()) as { selection: SelectionData; error: string | null }) : null;
      if (answer) {
        setBase(answer.selection);
        setError(answer.error);
      } else {
        // Not taken (signed out, offline …): put the changes back so they go with the next post or the form.
        for (const [id, on] of sending) if (!unsent.current.has(id)) unsent.current.set(id, on);
        setError("The selection could not be saved; it is sent again with your next action.");
      }
    } catch {
      for (const [id, on] of sending) if (!unsent.current.has(id)) unsent.current.set(id, on);
    } finally {
      busy.current = false;
      setOverlay(new Map(unsent.current));
      if (unsent.current.size) void flush();
    }
  }, [scopeQuery]);

  const toggle = useCallback(
    (id: number, on: boolean) => {
      unsent.current.set(id, on);
      setOverlay((o) => new Map(o).set(id, on));
      void flush();
    },
    [flush],
  );

  if (!base) return null;
  const isSelected = (id: number) => overlay.get(id) ?? pickedIn(base, id);
  let count = base.count;
  for (const [id, on] of overlay) if (on !== pickedIn(base, id)) count += on ? 1 : -1;
  return {
    isSelected,
    toggle,
    count: Math.max(0, count),
    /** Changes the server has not confirmed yet: posted with the grid's form too, so a bulk action never misses one. */
    pending: overlay,
    error,
  };
}

/**
 * The bulk actions: buttons of the grid's form (so the ticks of this page go with them), each leading to its
 * confirmation page. Without JavaScript a row of buttons; with it a menu that hides 2 seconds after the mouse
 * leaves it (never while it holds keyboard focus).
 */
function BulkMenu({ items, hydrated, waiting }: { items: BulkItem[]; hydrated: boolean; waiting: boolean }) {
  const menu = useMenu({ hideAfterLeaveMs: HIDE_AFTER_MS });
  const buttons = items.map((item) => (
    <li key={item.op}>
      <button
        type="submit"
        name="intent"
        value={item.op === "unselect" ? "deselect-all" : `bulk:${item.op}`}
        // A row of buttons without JavaScript; items of the menu's list with it.
        className={hydrated ? undefined : "btn"}
        disabled={waiting}
      >
        {item.label}
      </button>
    </li>
  ));
  if (!hydrated)
    return (
      <ul className="bulk-actions" aria-label="Bulk actions">
        {buttons}
      </ul>
    );
  return (
    <details className="bulk-menu" ref={menu}>
      <summary className="btn">Bulk actions</summary>
      <ul className="menu-panel" aria-label="Bulk actions">
        {buttons}
      </ul>
    </details>
  );
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
  cardsIn,
  bulk = [],
  pagesUrl = `/api/grid?${scopeQuery}`,
  links,
  marks,
  filtersVersion = null,
}: {
  data: GridData;
  /** The attribute filters' fingerprint (facets.server.ts), for 'New Filters Loaded'; null where there are none. */
  filtersVersion?: string | null;
  basePath: string;
  pageSize: number;
  /** `project=1` / `board=abc`: with JavaScript the grid becomes virtual and fetches its pages itself. */
  scopeQuery: string;
  onOpen: (id: number, trigger: HTMLElement) => void;
  /** The card menu's context (none on a shared board). */
  cardsIn?: CardsIn;
  /** The bulk actions this view offers (spec order); none for viewers. */
  bulk?: BulkItem[];
  /** Where the virtual grid gets its pages (default: /api/grid for the scope). */
  pagesUrl?: string;
  /** The cards' URLs on a shared board. */
  links?: CardLinks;
  /** A shared board's visitor's own marks, by image id. */
  marks?: Record<number, string | null>;
}) {
  const hydrated = useHydrated();
  const focusSpot = useFocusHandoff(hydrated, IMAGES_TARGET);
  const { cards, total, pos } = data;
  const live = useBackgroundSelection(data.selection, scopeQuery);
  const [virtualShown, setVirtualShown] = useState<number | null>(null);
  const shown = hydrated && virtualShown !== null ? virtualShown : pos + cards.length;
  // basePath may carry a query of its own (a board's review filter).
  const join = basePath.includes("?") ? "&" : "?";
  const from = basePath + (data.prev ? `${join}after=${data.prev}` : "");
  const link = (key: "after" | "before", cursor: string, at: number) => `${basePath}${join}${key}=${cursor}&pos=${at}`;
  const count = live?.count ?? 0;
  // While Select all (or another toolbar post) is on its way, its new selection cookie is not back yet: a bulk
  // action posted now would carry the old selection, so the toolbar waits.
  const navigation = useNavigation();
  const waiting = navigation.state === "submitting" && navigation.formAction?.split("?")[0] === basePath.split("?")[0];

  // The server's cards (one keyset page), until the virtual grid takes their place.
  const serverCards = hydrated ? null : links ? (
    // A shared board's page: its own URLs and marks, and a whole-page cache of its own (shared-page-cache.server.ts).
    <ul className="image-grid" aria-label="Images">
      {cards.map((card) => (
        <li key={card.id}>
          <ImageCard
            card={card}
            from={from}
            selectable={Boolean(live)}
            checked={live?.isSelected(card.id)}
            onOpen={onOpen}
            links={links}
            mark={marks?.[card.id]}
          />
          {live ? <input type="hidden" name="page" value={card.id} /> : null}
        </li>
      ))}
    </ul>
  ) : (
    <StaticCards cards={cards} from={from} cardsIn={cardsIn} isSelected={live ? live.isSelected : null} />
  );
  // 'Skip to images' lands here, just before the first card (past the toolbar: without JavaScript its bulk
  // actions are a row of buttons).
  const grid = (
    <div id={IMAGES_TARGET} tabIndex={-1} className="skip-target">
      {hydrated ? (
        <VirtualGrid
          key={data.version}
          pagesUrl={pagesUrl}
          links={links}
          marks={marks}
          total={total}
          first={cards}
          startAt={pos}
          from={from}
          selection={live ? { isSelected: live.isSelected, toggle: live.toggle } : null}
          onOpen={onOpen}
          cardsIn={cardsIn}
          onPosition={setVirtualShown}
        />
      ) : (
        <NoteFocusOnLeave spot={focusSpot}>{serverCards}</NoteFocusOnLeave>
      )}
    </div>
  );

  return (
    <section className="grid-wrap" aria-label="Images">
      {hydrated ? <FreshnessCheck pagesUrl={pagesUrl} version={data.version} filters={filtersVersion} /> : null}
      <div className="grid-status">
        <p className="grid-count" aria-live="polite">
          {shown} / {total} images
        </p>
        <label className="grid-progress">
          <span>Image Index</span>
          <progress max={Math.max(total, 1)} value={shown} />
        </label>
        {live ? (
          <p className="grid-selected" aria-live="polite">
            {count} selected
          </p>
        ) : null}
        {live?.error ? (
          <p className="field-error" role="alert">
            {live.error}
          </p>
        ) : null}
      </div>
      {cards.length === 0 ? (
        <p className="empty skip-target" id={IMAGES_TARGET} tabIndex={-1}>
          No related images found
        </p>
      ) : live ? (
        <Form method="post" className="grid-form" preventScrollReset>
          <div className="grid-toolbar">
            {count > 0 ? (
              <button type="submit" name="intent" value="deselect-all" className="btn" disabled={waiting}>
                Deselect all
              </button>
            ) : (
              <button type="submit" name="intent" value="select-all" className="btn" disabled={waiting}>
                Select all
              </button>
            )}
            {hydrated ? null : (
              <button type="submit" name="intent" value="update" className="btn">
                Update selection
              </button>
            )}
            {/* Always there: without JavaScript the ticks of this page travel with the button that is pressed. */}
            {bulk.length ? <BulkMenu items={bulk} hydrated={hydrated} waiting={waiting} /> : null}
          </div>
          {hydrated
            ? [...live.pending].map(([id, on]) => (
                <span key={id} hidden>
                  <input type="hidden" name="page" value={id} />
                  {on ? <input type="hidden" name="ids" value={id} /> : null}
                </span>
              ))
            : null}
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
    </section>
  );
}
