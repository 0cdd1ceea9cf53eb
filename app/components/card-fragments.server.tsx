import { randomUUID } from "node:crypto";
import { renderToStaticMarkup } from "react-dom/server";
import { remember } from "~/lib/bounded-cache";
import { StaticCardItem, type StaticCardsProps } from "./static-cards";

/**
 * The grid's cards, each rendered once and its HTML reused (decision 0030). A card's markup is a pure function of
 * its data, its tick and where it sits (the menu's items), so those are its key: an edited title, a new thumbnail or
 * a tick is another key, and nothing needs invalidating. The page's own URL (`from`, in each card's links) differs
 * between a filter's views and the grid's pages; a kept card holds a mark in its place, replaced per page, so one
 * card serves them all.
 */

/** About 2 KB each: 3,000 cards are ~6 MB, fifty pages of the grid. */
const MAX_CARDS = 3_000;
const kept = new Map<string, string>();

/** Stands for the page's `from` in a kept card: random per process, so no title or keyword can hold it. */
const FROM = `\u0001${randomUUID()}`;
const FROM_IN_HTML = encodeURIComponent(FROM);

/**
 * An attribute value byte for byte as React writes it (`&#x27;`; lib/html's escapeHtml writes `&#39;`, as safe but not
 * the bytes the render memo and the tests compare). Only `'` of these can occur in encodeURIComponent's output.
 */
const attribute = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;" })[c]!);

export function cardsHtml({ cards, from, cardsIn, isSelected }: StaticCardsProps): string {
  const fromHtml = attribute(encodeURIComponent(from));
  let html = "";
  for (const card of cards) {
    const checked = isSelected ? isSelected(card.id) : null;
    const key = JSON.stringify([card, cardsIn ?? null, checked]);
    // Least recently used out: a card shown again becomes the newest (remember), so a busy project's cards stay.
    const item = kept.get(key) ?? renderToStaticMarkup(<StaticCardItem card={card} from={FROM} cardsIn={cardsIn} checked={checked} />);
    remember(kept, key, item, MAX_CARDS);
    html += item.replaceAll(FROM_IN_HTML, fromHtml);
  }
  return html;
}
