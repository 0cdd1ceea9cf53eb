import { signedCookie } from "./cookies.server";

/**
 * The grid selection, kept on the server side of the form so it works without JavaScript and across pages:
 * either a list of picked ids, or "all" (the whole filtered set) minus a list of exceptions. One scope at a time.
 */
export interface Selection {
  scope: string;
  all: boolean;
  ids: number[];
}
// 300 ids keep the signed cookie well under the 4 KB browsers accept.
export const MAX_PICKED = 300;

const cookie = signedCookie("koala_selection", { maxAgeSeconds: () => 7 * 86_400 });

export async function readSelection(request: Request, scope: string): Promise<Selection> {
  const v = (await cookie().parse(request.headers.get("Cookie"))) as Selection | null;
  return v && v.scope === scope && v.all === Boolean(v.all) && Array.isArray(v.ids) && v.ids.every(Number.isSafeInteger)
    ? v
    : { scope, all: false, ids: [] };
}
export const selectionCookie = (selection: Selection) => cookie().serialize(selection);
