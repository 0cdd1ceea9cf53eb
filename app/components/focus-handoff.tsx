import { useEffect, useLayoutEffect, useRef, type MutableRefObject, type ReactNode } from "react";

/**
 * Keyboard focus across the grid's change from the server's cards to the virtual grid. A person who tabbed into a
 * card before the page's script ran (a slow machine, a slow network) had the focus on an element that the change
 * removes, and was left on the page's body, back at the top for the next Tab. The card's control is noted as the
 * server's list goes, and the same control of the same card is focused once the virtual grid shows it.
 */
export interface FocusSpot {
  imageId: number;
  /** The control within the card. */
  control: string;
}

/** A card's controls, as both grids write them; anything else in a card (an open menu's item) maps to its menu's summary. */
const CONTROLS = ["input[name=ids]", "a.image-card-view", ".card-menu summary"];

function focusSpot(): FocusSpot | null {
  const active = document.activeElement;
  const card = active?.closest<HTMLElement>("article[data-image-id]");
  if (!active || !card) return null;
  const control = CONTROLS.find((c) => active.matches(c)) ?? (active.closest(".card-menu") ? CONTROLS[2]! : CONTROLS[1]!);
  return { imageId: Number(card.dataset.imageId), control };
}

/** A layout effect in the browser; nothing to do (and React's warning avoided) on the server. */
const useBrowserLayoutEffect = typeof document === "undefined" ? useEffect : useLayoutEffect;

/**
 * Wraps the server's list of cards: as it leaves, where the focus was in it is noted in `spot`. A layout effect's
 * cleanup: it runs before React removes the list's elements (a passive one would run after, the focus already gone).
 */
export function NoteFocusOnLeave({ spot, children }: { spot: MutableRefObject<FocusSpot | null>; children: ReactNode }) {
  useBrowserLayoutEffect(
    () => () => {
      spot.current = focusSpot();
    },
    [spot],
  );
  return children;
}

/**
 * How long to wait for the virtual grid to show the card: it lays its rows out after measuring the page, and a page
 * opened deep in the grid fetches its cards first (on the slow network this is for, a while).
 */
const WAIT_MS = 5_000;

/**
 * Once `active` (the virtual grid is shown), focuses the noted control of the noted card in `root`, or `root` itself
 * when the card is not shown within WAIT_MS. Nothing is done if the person has put the focus somewhere meanwhile.
 */
export function useFocusHandoff(active: boolean, rootId: string) {
  const spot = useRef<FocusSpot | null>(null);
  useEffect(() => {
    const noted = spot.current;
    if (!active || !noted) return;
    spot.current = null;
    const until = performance.now() + WAIT_MS;
    let request = 0;
    // From the next frame on: the grid's first rows are laid out by then.
    const attempt = () => {
      if (document.activeElement && document.activeElement !== document.body) return;
      const root = document.getElementById(rootId);
      const target = root?.querySelector<HTMLElement>(`article[data-image-id="${noted.imageId}"] ${noted.control}`);
      if (target) target.focus();
      else if (performance.now() < until) request = requestAnimationFrame(attempt);
      else root?.focus();
    };
    request = requestAnimationFrame(attempt);
    return () => cancelAnimationFrame(request);
  }, [active, rootId]);
  return spot;
}
