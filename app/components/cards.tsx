import { Link } from "@remix-run/react";
import { initialsOf } from "~/lib/initials";
import { logoUrl, mediaUrl } from "~/lib/media";
import { Icon } from "./icons";
import type { BoardCard as BoardCardModel } from "~/models/boards.server";

/** A board card's data: the cover's thumbnail URL as the loader made it (signed where MEDIA_OFFLOAD=signed). */
type BoardCardData = Omit<BoardCardModel, "cover"> & { cover: (NonNullable<BoardCardModel["cover"]> & { thumbUrl?: string }) | null };

/** A project ("client") card: its initials in a circle (or its logo) and its name. */
export function ProjectCard({ id, name, logoKey }: { id: number; name: string; logoKey: string | null }) {
  const initials = initialsOf(name);
  return (
    <Link to={`/client/${id}`} className="card project-card">
      <span className="project-initials" aria-hidden="true">
        {logoKey ? <img className="card-logo" src={logoUrl(id, logoKey)} alt="" /> : initials}
      </span>
      <span className="card-title">{name}</span>
    </Link>
  );
}

/**
 * A board card: cover thumbnail, title, project and image count, and what clients said in review. Leads to
 * /{clientID}/board/{boardId}; editors also get the board's Share page, a link of its own beside the card's.
 */
export function BoardCard({ board }: { board: BoardCardData }) {
  const r = board.reviews;
  return (
    <div className="board-card-wrap">
      <BoardCardLink board={board} />
      {r ? (
        <p className="card-reviews">
          <span className="sr-only">Client reviews: </span>
          {r.approved} approved · {r.rejected} rejected · {r.comments} comment{r.comments === 1 ? "" : "s"}
        </p>
      ) : null}
      {board.canShare ? (
        <Link to={`/${board.projectId}/board/${board.id}/share`} className="card-share" aria-label={`Share ${board.title}`} title="Share">
          <Icon name="share" />
        </Link>
      ) : null}
    </div>
  );
}

function BoardCardLink({ board }: { board: BoardCardData }) {
  return (
    <Link to={`/${board.projectId}/board/${board.id}`} className="card board-card">
      {board.cover ? (
        <img
          src={board.cover.thumbUrl ?? mediaUrl(board.cover.imageId, board.cover.thumbKey)}
          alt=""
          loading="lazy"
          width={240}
          height={160}
        />
      ) : (
        <span className="board-cover-empty" aria-hidden="true" />
      )}
      <span className="card-title">{board.title}</span>
      <span className="card-meta">
        {board.projectName} · {board.imageCount} image{board.imageCount === 1 ? "" : "s"}
      </span>
    </Link>
  );
}
