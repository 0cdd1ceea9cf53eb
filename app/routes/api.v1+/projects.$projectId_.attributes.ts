import { attributesOf, createAttribute, type AttributeRow } from "~/models/attributes.server";
import { projectScope, requireManage } from "~/models/scope.server";
import { endpoint, readBody, reply, type Methods } from "./api.server";
import { NewAttribute } from "./schemas.server";

const KIND = { 1: "wsc", 2: "system", 3: "user" } as const;
const attributeBody = (a: AttributeRow) => ({ id: a.id, name: a.name, code: a.code, active: a.active, kind: KIND[a.type] });

/**
 * /api/v1/projects/{projectId}/attributes: the project's attributes, in the order they were made (GET); a new user
 * attribute, for managers, active unless the project has 33 active ones already (POST).
 */
const methods: Methods = {
  GET: async ({ request, params, actor }) => {
    const scope = await projectScope(actor, params.projectId);
    return reply(request, { items: (await attributesOf(scope)).map(attributeBody) });
  },
  POST: async ({ request, params, actor }) => {
    const scope = requireManage(await projectScope(actor, params.projectId));
    const { name } = await readBody(request, NewAttribute);
    const id = await createAttribute(scope, { name, type: 3 });
    const made = (await attributesOf(scope)).find((a) => a.id === id)!;
    return reply(request, attributeBody(made), { status: 201 });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
