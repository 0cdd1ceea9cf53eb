import { copyToBoard } from "~/models/bulk.server";
import { idsInScope } from "~/models/grid.server";
import { boardScope, projectOfBoard, requireEdit } from "~/models/scope.server";
import { endpoint, readBody, reply, type Methods } from "./api.server";
import { requireAll } from "./selection.server";
import { BoardImages } from "./schemas.server";

/** POST /api/v1/boards/{boardId}/images: puts images of the board's project on it; those already there are skipped. */
const methods: Methods = {
  POST: async ({ request, params, actor }) => {
    const board = requireEdit(await boardScope(actor, params.boardId));
    const { imageIds } = await readBody(request, BoardImages);
    const project = projectOfBoard(board);
    requireAll(imageIds, await idsInScope(project, imageIds));
    return reply(request, await copyToBoard(project, { all: false, ids: imageIds }, board.board.id));
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
