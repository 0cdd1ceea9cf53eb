import { Icon } from "./icons";
import { useMenu } from "./menu";

/** Where a card sits, and so what its menu offers (spec: pin; delete in a project or remove on a board; view). */
export type CardContext = { kind: "project" } | { kind: "board"; boardId: string; path: string };

/**
 * A card's side menu: a <details> disclosure (keyboard-operable, no JavaScript needed). Items that write post
 * through the grid's form with their own formAction (a form cannot hold another form).
 */
export function CardMenu({
  id,
  title,
  from,
  context,
  canEdit,
  viewHref,
}: {
  id: number;
  title: string;
  from: string;
  context: CardContext;
  canEdit: boolean;
  viewHref: string;
}) {
  const menu = useMenu();
  return (
    <details className="card-menu" ref={menu}>
      <summary aria-label={`Actions for ${title}`} title="Actions">
        <Icon name="dots" />
      </summary>
      <ul className="menu-panel">
        {canEdit ? (
          <li>
            <a href={`/image/${id}/pin?from=${encodeURIComponent(from)}`}>Pin to a board</a>
          </li>
        ) : null}
        {canEdit && context.kind === "project" ? (
          <li>
            <a href={`/image/${id}/delete`}>Delete</a>
          </li>
        ) : null}
        {canEdit && context.kind === "board" ? (
          <>
            <li>
              <a href={`${context.path}/remove/${id}`}>Remove</a>
            </li>
            <li>
              <button type="submit" formAction={`${context.path}/cover`} formMethod="post" name="imageId" value={id}>
                Set as cover
              </button>
            </li>
          </>
        ) : null}
        <li>
          <a href={viewHref}>View</a>
        </li>
      </ul>
    </details>
  );
}
