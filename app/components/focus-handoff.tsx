import { useEffect, useLayoutEffect, useRef, type ReactNode, type RefObject } from "react";

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

/**
 * Wraps the server's list of cards: as it leaves (its cleanup runs before React removes its elements), where the focus
 * was in it is noted in `spot`.
 */
export function NoteFocusOnLeave({ spot, children }: { spot: RefObject<FocusSpot | null>; children: ReactNode }) {
  useLayoutEffect(
    () => () => {
      (spot as { current: FocusSpot | null }).current = focusSpot();
    },
    [spot],
  );
  return children;
}

/** Frames to wait for the virtual grid to render the card (it lays its rows out after measuring the page). */
const FRAMES = 30;

/**
 * Once `active` (the virtual grid is shown), focuses the noted control of the noted card in `root`, or `root` itself
 * when the card is not shown within FRAMES frames. Nothing is done if the person has put the focus somewhere meanwhile.
 */
export function useFocusHandoff(active: boolean, rootId: string) {
  const spot = useRef<FocusSpot | null>(null);
  useEffect(() => {
    const noted = spot.current;
    if (!active || !noted) return;
    spot.current = null;
    let frame = 0;
    let request = 0;
    const attempt = () => {
      if (document.activeElement && document.activeElement !== document.body) return;
      const root = document.getElementById(rootId);
      const target = root?.querySelector<HTMLElement>(`article[data-image-id="${noted.imageId}"] ${noted.control}`);
      if (target) target.focus();
      else if (++frame < FRAMES) request = requestAnimationFrame(attempt);
      else root?.focus();
    };
    attempt();
    return () => cancelAnimationFrame(request);
  }, [active, rootId]);
  return spot;
}
