import { Link } from "@remix-run/react";
import { initialsOf } from "~/lib/initials";
import { mediaUrl } from "~/lib/media";
import type { BoardCard as BoardCardData } from "~/models/boards.server";

/** A project ("client") card: its initials in a circle (or its logo) and its name. */
export function ProjectCard({ id, name }: { id: number; name: string }) {
  const initials = initialsOf(name);
  return (
    <Link to={`/client/${id}`} className="card project-card">
      <span className="project-initials" aria-hidden="true">
        {initials}
      </span>
      <span className="card-title">{name}</span>
    </Link>
  );
}

/** A board card: cover thumbnail, title, project and image count. Leads to /{clientID}/board/{boardId}. */
export function BoardCard({ board }: { board: BoardCardData }) {
  return (
    <Link to={`/${board.projectId}/board/${board.id}`} className="card board-card">
      {board.cover ? (
        <img src={mediaUrl(board.cover.imageId, board.cover.thumbKey)} alt="" loading="lazy" width={240} height={160} />
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
