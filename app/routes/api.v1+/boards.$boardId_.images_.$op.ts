import { copyToBoard, moveToBoard, removeFromBoardBulk } from "~/models/bulk.server";
import { idsInScope } from "~/models/grid.server";
import { boardScope, requireEdit } from "~/models/scope.server";
import { ApiProblem, endpoint, readBody, reply, type Methods } from "./api.server";
import { requireAll } from "./selection.server";
import { BoardImages, BoardTransfer } from "./schemas.server";

/**
 * POST /api/v1/boards/{boardId}/images/remove | copy | move: the board view's bulk actions on the images given,
 * each of which must be on this board. Copy and move go to another board of the same project.
 */
const methods: Methods = {
  POST: async ({ request, params, actor }) => {
    const op = params.op;
    if (op !== "remove" && op !== "copy" && op !== "move") throw new ApiProblem(404, `No such endpoint: ${new URL(request.url).pathname}`);
    const scope = requireEdit(await boardScope(actor, params.boardId));
    if (op === "remove") {
      const { imageIds } = await readBody(request, BoardImages);
      requireAll(imageIds, await idsInScope(scope, imageIds));
      return reply(request, await removeFromBoardBulk(scope, { all: false, ids: imageIds }));
    }
    const { imageIds, targetBoardId } = await readBody(request, BoardTransfer);
    requireAll(imageIds, await idsInScope(scope, imageIds));
    const picked = { all: false, ids: imageIds };
    return reply(
      request,
      op === "copy" ? await copyToBoard(scope, picked, targetBoardId) : await moveToBoard(scope, picked, targetBoardId),
    );
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
