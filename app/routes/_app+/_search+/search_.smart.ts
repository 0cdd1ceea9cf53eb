import type { ActionFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { InvalidError } from "~/lib/errors";
import { api, readJson } from "~/web/http.server";
import { cleanQuery, MAX_QUERY_LENGTH } from "~/lib/keywords-query";
import { allProjectsScope, boardScope, projectScope } from "~/models/scope.server";
import { smartAnswer } from "~/services/smart-search.server";
import { requireActor } from "~/sessions.server";

const SmartSearchSchema = z.object({
  search: z.string({ required_error: "Please type what you are looking for" }).max(MAX_QUERY_LENGTH * 5),
  clientID: z.coerce.number().int().positive().optional(),
  boardID: z.string().max(64).optional(),
});

/**
 * POST /search/smart (spec 1's call table): `{search, clientID?, boardID?}` → `{description, tags[]}`: what a phrase
 * becomes over a board's, a project's or (neither given) every project's vocabulary. The pages ask the same service
 * through their URLs; this is the call for scripts and other clients.
 */
export const action = api(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await requireActor(request, context);
  if (request.method !== "POST") return Response.json({ error: "Method not allowed" }, { status: 405, headers: { Allow: "POST" } });
  const parsed = SmartSearchSchema.safeParse(await readJson(request));
  if (!parsed.success) throw new InvalidError(parsed.error.issues[0]?.message);
  const { search, clientID, boardID } = parsed.data;
  const phrase = cleanQuery(search).trim();
  if (!phrase) throw new InvalidError("Please type what you are looking for");
  const scope =
    boardID !== undefined
      ? await boardScope(actor, boardID, clientID)
      : clientID !== undefined
        ? await projectScope(actor, clientID)
        : await allProjectsScope(actor);
  const answer = await smartAnswer(scope, phrase);
  return Response.json(
    { description: answer.failed ? "Failed to connect to server" : answer.description, tags: answer.tags },
    { headers: { "Cache-Control": "no-store" } },
  );
});

export const loader = () => Response.json({ error: "Method not allowed" }, { status: 405, headers: { Allow: "POST" } });
