import { useState } from "react";
import { useHydrated } from "remix-utils/use-hydrated";
import { Icon } from "./icons";
import { useMenu } from "./menu";

/** Where a card sits, and so what its menu offers (spec: pin; delete in a project or remove on a board; view). */
export type CardContext = { kind: "project" } | { kind: "board"; boardId: string; path: string };

/**
 * A card's side menu: a <details> disclosure (keyboard-operable, no JavaScript needed). Items that write post
 * through the grid's form with their own formAction (a form cannot hold another form).
 * In the browser the items are made when the menu is first opened: a summary's click (Enter and Space are clicks
 * too) renders them before the browser opens it; a menu opened otherwise (an assistive technology's expand) makes
 * them as it opens. Rows of cards mount as the virtual grid scrolls, and the items were a third of each card's
 * elements (bench P8b). The server's cards, for pages without JavaScript, hold them all.
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
  const hydrated = useHydrated();
  const [opened, setOpened] = useState(false);
  return (
    <details className="card-menu" ref={menu} onToggle={opened ? undefined : (e) => e.currentTarget.open && setOpened(true)}>
      <summary aria-label={`Actions for ${title}`} title="Actions" onClick={opened ? undefined : () => setOpened(true)}>
        <Icon name="dots" />
      </summary>
      {hydrated && !opened ? null : (
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
      )}
    </details>
  );
}
