import { mediaUrl } from "~/lib/media";

export interface CardData {
  id: number;
  title: string;
  keywords: string[];
  thumbKey: string;
}

/**
 * An image card: thumbnail, title, first five keywords, a selection checkbox (not on shared boards)
 * and a menu with View (and Delete in a project grid, for editors). The full-info overlay shows on hover and on keyboard focus.
 */
export function ImageCard({
  card,
  from,
  selectable,
  checked,
  onOpen,
  deletable = false,
}: {
  card: CardData;
  from: string;
  selectable: boolean;
  checked?: boolean;
  onOpen: (id: number, trigger: HTMLElement) => void;
  /** Project grids of editors: a Delete link to the typed confirmation. */
  deletable?: boolean;
}) {
  const href = `/image/${card.id}?from=${encodeURIComponent(from)}`;
  const titleId = `card-${card.id}-title`;
  return (
    <article className="image-card" aria-labelledby={titleId} data-image-id={card.id}>
      <img src={mediaUrl(card.id, card.thumbKey)} alt="" loading="lazy" decoding="async" className="image-card-thumb" />
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
          <input type="checkbox" name="ids" value={card.id} defaultChecked={checked} key={String(checked)} />
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
      {deletable ? (
        <a href={`/image/${card.id}/delete`} className="image-card-delete">
          Delete<span className="sr-only"> {card.title || `image ${card.id}`}</span>
        </a>
      ) : null}
    </article>
  );
}
