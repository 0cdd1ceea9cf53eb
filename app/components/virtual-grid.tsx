import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { ImageCard, type CardData, type CardLinks, type CardsIn } from "./image-card";

/** The spec's grid constants. */
export const GAP = 15;
export const OVERSCAN_ROWS = 3;
export const RESIZE_DEBOUNCE_MS = 500;
const FETCH_PAGE = 100;
/** The shortest and the longest wait before a page that did not come is asked for again. */
const MIN_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/**
 * Images per scroll segment. Browsers cap an element's height (Chromium at 33,554,432 px), and a million images
 * in rows of four need about 60 million: so a huge scope is scrolled 100,000 images at a time, with First /
 * Previous / Next / Last between segments (at most ~12 million px even at two columns).
 */
export const SEGMENT = 100_000;

/** 2 to 4 columns by width (the same breakpoints as the server-rendered grid's CSS). */
export const columnsFor = (width: number) => (width >= 1200 ? 4 : width >= 800 ? 3 : 2);

interface Props {
  /** Where pages of cards come from: /api/grid?project=1, or a shared board's /shared/board/get?sharedUrl=…. */
  pagesUrl: string;
  links?: CardLinks;
  marks?: Record<number, string | null>;
  total: number;
  first: CardData[];
  /** Position (0-based) to show first, when the page was opened deep in the grid. */
  startAt: number;
  from: string;
  /** The grid's live selection (null where there is none, as on a shared board). */
  selection: { isSelected: (id: number) => boolean; toggle: (id: number, on: boolean) => void } | null;
  onOpen: (id: number, trigger: HTMLElement) => void;
  cardsIn?: CardsIn;
  onPosition: (shown: number) => void;
}

/**
 * The JavaScript grid: every image of the scope is a row slot in a window virtualizer, and pages of
 * 100 cards are fetched as their rows come near the viewport — after the previous page's cursor
 * when it is known, from a position otherwise (a jump), so the last image is reachable directly.
 */
export function VirtualGrid({ pagesUrl, links, marks, total, first, startAt, from, selection, onOpen, onPosition, cardsIn }: Props) {
  const container = useRef<HTMLDivElement>(null);
  // Rendered in the browser only: the columns are right from the first render, so no card moves to another row (and
  // loses the focus the grid's hand-over gave it, focus-handoff.tsx) when the layout is measured.
  const [layout, setLayout] = useState(() => ({ columns: columnsFor(window.innerWidth), rowHeight: 240, offset: 0 }));
  const pages = useRef(new Map<number, { cards: CardData[]; next: string | null }>());
  const pending = useRef(new Set<number>());
  const [, setVersion] = useState(0);
  const [base, setBase] = useState(() => Math.floor(startAt / SEGMENT) * SEGMENT);
  const segmentSize = Math.max(0, Math.min(SEGMENT, total - base));

  // The server's first cards (a page of 60) stand for the start of the first page of 100 until a card past them is
  // wanted: they were once taken for the whole page, and the 61st to 100th cards never came.
  const sent = startAt === 0 ? first : [];

  // Columns and row height follow the container's width, re-evaluated 500 ms after a resize.
  useLayoutEffect(() => {
    const el = container.current;
    if (!el) return;
    const measure = () => {
      const width = el.clientWidth;
      const columns = columnsFor(window.innerWidth);
      const cardWidth = (width - GAP * (columns - 1)) / columns;
      setLayout({ columns, rowHeight: Math.round((cardWidth * 3) / 4), offset: el.getBoundingClientRect().top + window.scrollY });
    };
    measure();
    let timer: ReturnType<typeof setTimeout>;
    const observer = new ResizeObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(measure, RESIZE_DEBOUNCE_MS);
    });
    observer.observe(el);
    return () => {
      clearTimeout(timer);
      observer.disconnect();
    };
  }, []);

  const rows = Math.ceil(segmentSize / layout.columns);
  const virtualizer = useWindowVirtualizer({
    count: rows,
    estimateSize: () => layout.rowHeight,
    overscan: OVERSCAN_ROWS,
    gap: GAP,
    scrollMargin: layout.offset,
  });
  useEffect(() => virtualizer.measure(), [layout, virtualizer]);

  // A page that did not come (a busy server's 503, a dropped connection) is asked for again while it is wanted:
  // after the server's Retry-After, or 1, 2, 4 … s, never sooner than 1 s nor later than 30 s, plus up to a quarter
  // more at random (so the grids a busy server refused together do not all come back together). One timer serves
  // every failed page and asks again for all pages in view; it is only ever put later, so no page is asked for sooner
  // than its server said. Nothing else would ask again until the rows in view changed.
  const failures = useRef(new Map<number, number>());
  const [retryTick, setRetryTick] = useState(0);
  const retryTimer = useRef<ReturnType<typeof setTimeout>>();
  const retryAt = useRef(0);
  useEffect(() => () => clearTimeout(retryTimer.current), []);
  const retryLater = useCallback((page: number, retryAfter: string | null) => {
    const failed = (failures.current.get(page) ?? 0) + 1;
    failures.current.set(page, failed);
    const seconds = Number(retryAfter);
    const wait = retryAfter && seconds >= 0 ? seconds * 1000 : 1000 * 2 ** (failed - 1);
    const delay = Math.min(MAX_RETRY_MS, Math.max(MIN_RETRY_MS, wait)) * (1 + Math.random() / 4);
    const now = Date.now();
    if (retryAt.current > now + delay) return;
    retryAt.current = now + delay;
    clearTimeout(retryTimer.current);
    retryTimer.current = setTimeout(() => {
      retryAt.current = 0;
      setRetryTick((t) => t + 1);
    }, delay);
  }, []);

  const load = useCallback(
    async (page: number) => {
      if (pages.current.has(page) || pending.current.has(page)) return;
      pending.current.add(page);
      const previous = pages.current.get(page - 1);
      const position = previous?.next ? `after=${previous.next}` : `at=${page * FETCH_PAGE}`;
      try {
        const res = await fetch(`${pagesUrl}&${position}&limit=${FETCH_PAGE}`, { credentials: "same-origin" });
        if (res.ok) {
          const body = (await res.json()) as { cards: CardData[]; next: string | null };
          pages.current.set(page, body);
          failures.current.delete(page);
          setVersion((v) => v + 1);
        } else if (res.status >= 500 || res.status === 429) {
          retryLater(page, res.headers.get("Retry-After"));
        }
      } catch {
        retryLater(page, null);
      } finally {
        pending.current.delete(page);
      }
    },
    [pagesUrl, retryLater],
  );

  // Indexes below are positions in the whole scope: the segment's base plus the slot's place in the segment.
  const items = virtualizer.getVirtualItems();
  const firstIndex = base + (items[0]?.index ?? 0) * layout.columns;
  const lastIndex = base + Math.min(segmentSize, ((items[items.length - 1]?.index ?? 0) + 1) * layout.columns);
  useEffect(() => {
    for (let p = Math.floor(firstIndex / FETCH_PAGE); p <= Math.floor(Math.max(0, lastIndex - 1) / FETCH_PAGE); p++)
      if (p > 0 || lastIndex > sent.length) void load(p);
  }, [firstIndex, lastIndex, load, sent.length, retryTick]);

  // Where the person is: the last card whose row is on screen.
  const visible = items.filter((i) => i.end > window.scrollY && i.start < window.scrollY + window.innerHeight);
  const shown = base + Math.min(segmentSize, ((visible[visible.length - 1]?.index ?? 0) + 1) * layout.columns);
  useEffect(() => onPosition(shown), [shown, onPosition]);

  // Opened deep in the grid (?after=…&pos=N): start there.
  const jumped = useRef(false);
  useEffect(() => {
    if (!jumped.current && startAt > 0 && layout.offset > 0) {
      jumped.current = true;
      virtualizer.scrollToIndex(Math.floor((startAt - base) / layout.columns), { align: "start" });
    }
  }, [startAt, base, layout, virtualizer]);

  const lastBase = Math.max(0, Math.floor((total - 1) / SEGMENT) * SEGMENT);
  const goTo = (next: number) => {
    setBase(next);
    window.scrollTo({ top: layout.offset - 80 });
  };
  const segments =
    total > SEGMENT ? (
      <nav className="grid-segments" aria-label="Image segments">
        <span>
          Images {(base + 1).toLocaleString("en")}–{(base + segmentSize).toLocaleString("en")} of {total.toLocaleString("en")}
        </span>
        <button type="button" className="btn" disabled={base === 0} onClick={() => goTo(0)}>
          First
        </button>
        <button type="button" className="btn" disabled={base === 0} onClick={() => goTo(Math.max(0, base - SEGMENT))}>
          Previous {SEGMENT.toLocaleString("en")}
        </button>
        <button type="button" className="btn" disabled={base >= lastBase} onClick={() => goTo(base + SEGMENT)}>
          Next {SEGMENT.toLocaleString("en")}
        </button>
        <button type="button" className="btn" disabled={base >= lastBase} onClick={() => goTo(lastBase)}>
          Last
        </button>
      </nav>
    ) : null;

  const cardAt = (index: number) => pages.current.get(Math.floor(index / FETCH_PAGE))?.cards[index % FETCH_PAGE] ?? sent[index];

  return (
    <>
      {segments}
      <div ref={container} className="virtual-grid" style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        {items.map((row) => (
          <ul
            key={row.key}
            className="virtual-row"
            aria-label={`Images ${base + row.index * layout.columns + 1} to ${base + Math.min(segmentSize, (row.index + 1) * layout.columns)}`}
            style={{
              transform: `translateY(${row.start - virtualizer.options.scrollMargin}px)`,
              height: row.size,
              gridTemplateColumns: `repeat(${layout.columns}, minmax(0, 1fr))`,
            }}
          >
            {Array.from({ length: layout.columns }, (_, c) => base + row.index * layout.columns + c)
              .filter((i) => i < base + segmentSize)
              .map((i) => {
                const card = cardAt(i);
                return (
                  <li key={i}>
                    {card ? (
                      <ImageCard
                        card={card}
                        from={from}
                        selectable={Boolean(selection)}
                        checked={selection?.isSelected(card.id)}
                        onToggle={selection?.toggle}
                        onOpen={onOpen}
                        cardsIn={cardsIn}
                        links={links}
                        mark={marks?.[card.id]}
                      />
                    ) : (
                      <div className="image-card image-card-loading" aria-hidden="true" />
                    )}
                  </li>
                );
              })}
          </ul>
        ))}
      </div>
      {segments}
    </>
  );
}
