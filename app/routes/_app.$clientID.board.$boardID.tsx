import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { ImageGrid } from "~/components/image-grid";
import { ImageModal, useImageModal } from "~/components/image-modal";
import { NotFoundBoundary } from "~/components/not-found";
import { PAGE_SIZE } from "~/lib/grid";
import { loadGrid, orNotFound, updateSelection } from "~/lib/grid.server";
import type { Actor } from "~/models/actor";
import { getBoard } from "~/models/boards.server";
import { getProject } from "~/models/projects.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.board.title ?? "Board"} | Koala` }];

/** The board, when it exists, is visible to the actor and belongs to the project in the URL. */
async function boardOf(actor: Actor, clientID: string | undefined, boardID: string | undefined) {
  const board = await orNotFound(() => getBoard(actor, boardID ?? ""));
  if (String(board.project_id) !== clientID) throw data({ message: `No Board Found with ID: ${boardID}` }, { status: 404 });
  return board;
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const actor = await requireActor(request);
  const board = await boardOf(actor, params.clientID, params.boardID);
  const grid = await loadGrid(request, actor, { kind: "board", boardId: board.id });
  const project = await getProject(actor, board.project_id);
  return {
    board: { id: board.id, title: board.title, projectId: board.project_id },
    grid,
    header: { title: board.title, projectId: project.id, projectName: project.name, kind: "board" as const },
  };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const actor = await requireActor(request);
  const board = await boardOf(actor, params.clientID, params.boardID);
  return updateSelection(request, actor, { kind: "board", boardId: board.id });
}

export default function BoardGrid() {
  const { board, grid } = useLoaderData<typeof loader>();
  const modal = useImageModal();
  return (
    <div>
      <h1>{board.title}</h1>
      <ImageGrid data={grid} basePath={`/${board.projectId}/board/${board.id}`} pageSize={PAGE_SIZE} scopeQuery={`board=${encodeURIComponent(board.id)}`} onOpen={modal.open} />
      <ImageModal state={modal} />
    </div>
  );
}

export const ErrorBoundary = NotFoundBoundary;
