import { memo } from "react";
import { CARD_SIZES, cardSrcSet, gridThumbKey, mediaUrl } from "~/lib/media";
import { CardMenu, type CardContext } from "./card-menu";

export interface CardData {
  id: number;
  title: string;
  keywords: string[];
  thumbKey: string;
  /** The thumbnail's URL as the loader made it (signed where MEDIA_OFFLOAD=signed); otherwise made from the key. */
  thumbUrl?: string;
  /** The grid thumbnail's URL, likewise (signed where MEDIA_OFFLOAD=signed). */
  gridUrl?: string;
  /** On a shared board, from its JSON pages: the visitor's own mark. */
  mark?: string | null;
}

/** A card's URLs, when they are not the signed-in ones (a shared board's link has its own). */
export interface CardLinks {
  media: (imageId: number, key: string) => string;
  view: (imageId: number) => string;
}

/** Where the cards of a grid sit and whether the person may change things there (the card menu's items). */
export interface CardsIn {
  context: CardContext;
  canEdit: boolean;
}

/**
 * An image card: thumbnail, title, first five keywords, a selection checkbox (not on shared boards) and the side
 * menu (pin, delete or remove, set as cover, view). The full-info overlay shows on hover and on keyboard focus.
 * Memoized: the virtual grid re-renders as rows scroll in and as pages arrive, and a card already on screen whose
 * props are the same need not render again (bench P8b).
 */
export const ImageCard = memo(function ImageCard({
  card,
  from,
  selectable,
  checked = false,
  onToggle,
  onOpen,
  cardsIn,
  links,
  mark,
}: {
  card: CardData;
  from: string;
  selectable: boolean;
  checked?: boolean;
  /** With JavaScript: the box is controlled and each change is reported (the grid posts it in the background). */
  onToggle?: (id: number, checked: boolean) => void;
  onOpen: (id: number, trigger: HTMLElement) => void;
  /** The menu's context; none on a shared board (View only). */
  cardsIn?: CardsIn;
  links?: CardLinks;
  /** On a shared board: the visitor's own mark of this image. */
  mark?: string | null;
}) {
  const onBoard = cardsIn?.context.kind === "board" ? `&board=${encodeURIComponent(cardsIn.context.boardId)}` : "";
  const href = links ? links.view(card.id) : `/image/${card.id}?from=${encodeURIComponent(from)}${onBoard}`;
  const titleId = `card-${card.id}-title`;
  return (
    <article className="image-card" aria-labelledby={titleId} data-image-id={card.id}>
      <CardThumb card={card} links={links} />
      <div className="image-card-info">
        <h3 id={titleId} className="image-card-title">
          {card.title || "Untitled"}
        </h3>
        {card.keywords.length ? (
          <ul className="keywords" aria-label="Keywords">
            {card.keywords.map((k) => (
              <li key={k}>{k}</li>
            ))}
          </ul>
        ) : null}
      </div>
      {selectable ? (
        <label className="image-card-check">
          {onToggle ? (
            <input
              type="checkbox"
              name="ids"
              value={card.id}
              checked={checked}
              onChange={(e) => onToggle(card.id, e.currentTarget.checked)}
            />
          ) : (
            <input type="checkbox" name="ids" value={card.id} defaultChecked={checked} />
          )}
          <span className="sr-only">Select {card.title || `image ${card.id}`}</span>
        </label>
      ) : null}
      {/* Plain links: sixty cards of router Links cost the server page render ~10% of its time (bench P2). */}
      <a
        href={href}
        className="image-card-view"
        onClick={(e) => {
          if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          onOpen(card.id, e.currentTarget);
        }}
      >
        View<span className="sr-only"> {card.title || `image ${card.id}`}</span>
      </a>
      {(mark ?? card.mark) ? (
        <span className={`review-mark review-${mark ?? card.mark}`}>{(mark ?? card.mark) === "approved" ? "Approved" : "Rejected"}</span>
      ) : null}
      {cardsIn ? (
        <CardMenu
          id={card.id}
          title={card.title || `image ${card.id}`}
          from={from}
          context={cardsIn.context}
          canEdit={cardsIn.canEdit}
          viewHref={href}
        />
      ) : null}
    </article>
  );
});

/**
 * The card's picture: the grid thumbnail where it is enough (one device pixel per CSS pixel), the full thumbnail on
 * denser screens; the browser picks by the width the card is drawn at (CARD_SIZES).
 */
function CardThumb({ card, links }: { card: CardData; links?: CardLinks }) {
  const grid = gridThumbKey(card.thumbKey);
  const full = links ? links.media(card.id, card.thumbKey) : (card.thumbUrl ?? mediaUrl(card.id, card.thumbKey));
  const small = links ? links.media(card.id, grid) : (card.gridUrl ?? mediaUrl(card.id, grid));
  return (
    <img
      src={small}
      srcSet={cardSrcSet(small, full)}
      sizes={CARD_SIZES}
      alt=""
      loading="lazy"
      decoding="async"
      className="image-card-thumb"
    />
  );
}
