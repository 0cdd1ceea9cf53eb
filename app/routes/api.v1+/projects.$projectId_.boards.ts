import { boardsOfProject, createBoard } from "~/models/boards.server";
import { projectScope } from "~/models/scope.server";
import { type Methods, endpoint, readBody, reply } from "./api.server";
import { NewBoard } from "./schemas.server";

/** /api/v1/projects/{projectId}/boards: the project's boards by title (GET); a new board, with images or not (POST). */
const methods: Methods = {
  GET: async ({ request, params, actor }) => {
    const scope = await projectScope(actor, params.projectId);
    const boards = await boardsOfProject(scope);
    return reply(request, {
      items: boards.map((b) => ({ id: b.id, projectId: scope.project.id, title: b.title, clientBoard: b.clientBoard })),
    });
  },
  POST: async ({ request, params, actor }) => {
    const scope = await projectScope(actor, params.projectId);
    const input = await readBody(request, NewBoard);
    const board = await createBoard(scope, { title: input.title, imageIds: input.imageIds });
    const body = { id: board.id, projectId: board.project_id, title: board.title, clientBoard: board.is_client_board === 1 };
    return reply(request, body, { status: 201, headers: { Location: `/api/v1/boards/${board.id}` } });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
