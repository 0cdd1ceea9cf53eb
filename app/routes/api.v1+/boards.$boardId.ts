import { deleteBoard, renameBoard } from "~/models/boards.server";
import { boardScope } from "~/models/scope.server";
import { type Methods, endpoint, noContent, readBody, reply } from "./api.server";
import { BoardChange } from "./schemas.server";

const boardOf = (scope: Awaited<ReturnType<typeof boardScope>>, title = scope.board.title) => ({
  id: scope.board.id,
  projectId: scope.project.id,
  title,
  clientBoard: scope.board.clientBoard,
});

/** /api/v1/boards/{boardId}: the board (GET), renamed (PATCH), deleted with its pins, the images kept (DELETE). */
const methods: Methods = {
  GET: async ({ request, params, actor }) => {
    const scope = await boardScope(actor, params.boardId);
    return reply(request, boardOf(scope), { etag: `"b${scope.board.version}"` });
  },
  PATCH: async ({ request, params, actor }) => {
    const scope = await boardScope(actor, params.boardId);
    const { title } = await readBody(request, BoardChange);
    await renameBoard(scope, title);
    return reply(request, boardOf(scope, title));
  },
  DELETE: async ({ params, actor }) => {
    await deleteBoard(await boardScope(actor, params.boardId));
    return noContent();
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
