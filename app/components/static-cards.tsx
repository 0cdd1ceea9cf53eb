import { createContext, useContext } from "react";
import { ImageCard, type CardData, type CardsIn } from "./image-card";

/** The grid's cards as the server sends them (one keyset page), before JavaScript, if any, takes over. */
export interface StaticCardsProps {
  cards: CardData[];
  from: string;
  cardsIn?: CardsIn;
  /** Whether a card is ticked; null where nothing is selectable. */
  isSelected: ((id: number) => boolean) | null;
}

const noOpen = () => {};

/**
 * One card as an item of the grid's list, a pure function of its props: the server keeps its HTML and reuses it
 * (card-fragments.server.tsx, its server half). Without JavaScript the ticks of the page travel with the form (`page`).
 */
export function StaticCardItem({
  card,
  from,
  cardsIn,
  checked,
}: {
  card: CardData;
  from: string;
  cardsIn?: CardsIn;
  checked: boolean | null;
}) {
  return (
    <li>
      <ImageCard card={card} from={from} selectable={checked !== null} checked={checked ?? false} onOpen={noOpen} cardsIn={cardsIn} />
      {checked !== null ? <input type="hidden" name="page" value={card.id} /> : null}
    </li>
  );
}

/** On the server: the cards' HTML, from kept fragments (entry.server.tsx provides it). None in the browser. */
const CardsHtml = createContext<((props: StaticCardsProps) => string) | null>(null);
export const CardsHtmlProvider = CardsHtml.Provider;

/**
 * The grid's list of cards without JavaScript. The server writes it as HTML made of kept fragments: sixty cards
 * are most of a project page's elements, and rendering them was most of a first view's cost (bench P2-first,
 * decision 0030). In the browser this list only ever hydrates (the grid turns virtual right after): it keeps the
 * server's markup as it is, which React leaves alone inside an element with inner HTML.
 */
export function StaticCards(props: StaticCardsProps) {
  const html = useContext(CardsHtml);
  if (html) return <ul className="image-grid" aria-label="Images" dangerouslySetInnerHTML={{ __html: html(props) }} />;
  if (typeof document !== "undefined")
    return <ul className="image-grid" aria-label="Images" dangerouslySetInnerHTML={{ __html: "" }} suppressHydrationWarning />;
  return (
    <ul className="image-grid" aria-label="Images">
      {props.cards.map((card) => (
        <StaticCardItem key={card.id} card={card} from={props.from} cardsIn={props.cardsIn} checked={props.isSelected?.(card.id) ?? null} />
      ))}
    </ul>
  );
}
