import { parseWithZod } from "@conform-to/zod";
import {
  ATTRIBUTE_MESSAGES,
  attributeNameProblem,
  MAX_ACTIVE_ATTRIBUTES,
  normalAttributeName,
  NewAttributeSchema,
  smartNameProblem,
} from "../../../lib/attribute-rules";
import { ConflictError, getErrorMessage, HttpError } from "../../../lib/errors";
import { formError, redirectWithToast, refused } from "../../../web/http.server";
import { log } from "../../../lib/log.server";
import { attributesOf, createAttribute, updateAttributes, type AttributeChange } from "~/models/attributes.server";
import { requireManage, type ProjectScope } from "~/models/scope.server";

/** The Manage Attributes list as posted without change tracking: one row per attribute id. */
interface PostedRow {
  id: number;
  name: string;
  code: string;
  active: boolean;
}

const text = (v: FormDataEntryValue | null, max: number) => (typeof v === "string" ? v.slice(0, max) : "");

/** The rows of the Save form (`id` repeated; `name-<id>`, `code-<id>`, `active-<id>` per row), at most 500. */
function postedRows(form: FormData): PostedRow[] {
  const ids = [...new Set(form.getAll("id").map((v) => Number(v)))].filter((n) => Number.isSafeInteger(n) && n > 0).slice(0, 500);
  return ids.map((id) => ({
    id,
    name: text(form.get(`name-${id}`), 200),
    code: text(form.get(`code-${id}`), 200),
    active: form.get(`active-${id}`) === "on",
  }));
}

/** Create Attribute: the name's rules, then the model (409 on a name already taken in any case). */
export async function createFromForm(request: Request, scope: ProjectScope, form: FormData) {
  requireManage(scope);
  const submission = parseWithZod(form, { schema: NewAttributeSchema });
  if (submission.status !== "success") return refused("create", submission.reply());
  const typed = String(form.get("name") ?? "");
  try {
    const id = await createAttribute(scope, { name: submission.value.name, type: 3 });
    const created = (await attributesOf(scope)).find((a) => a.id === id);
    const notes = [
      /\s/.test(typed.trim()) ? ATTRIBUTE_MESSAGES.nameSpaces : null,
      created && !created.active ? `${ATTRIBUTE_MESSAGES.activeLimit}: it was created inactive.` : null,
    ].filter(Boolean);
    return redirectWithToast(request, attributesPath(scope), {
      kind: "success",
      title: `Attribute “${submission.value.name}” created`,
      description: notes.join(" ") || undefined,
    });
  } catch (err) {
    if (err instanceof ConflictError)
      return refused("create", submission.reply({ fieldErrors: { name: [ATTRIBUTE_MESSAGES.exists] } }), 409);
    if (err instanceof HttpError) throw err;
    log.error("attribute create failed", { projectId: scope.project.id, error: getErrorMessage(err) });
    return redirectWithToast(request, attributesPath(scope), { kind: "error", title: ATTRIBUTE_MESSAGES.createFailed });
  }
}

/**
 * Save: every posted row checked (name rules, smart-name rule) before anything is written; the model writes the
 * rows that changed in one transaction and answers how many.
 */
export async function saveFromForm(request: Request, scope: ProjectScope, form: FormData) {
  requireManage(scope);
  const rows = postedRows(form);
  const rowErrors: Record<number, string> = {};
  const changes: AttributeChange[] = rows.map((r) => {
    const name = normalAttributeName(r.name);
    const problem = attributeNameProblem(name) ?? smartNameProblem(r.code);
    if (problem) rowErrors[r.id] = problem;
    return { id: r.id, name, code: r.code, active: r.active };
  });
  // The rows come back as posted, with each row's problem; the form's own, if any, is the result's.
  const refuse = (message: string | null, status = 400) =>
    refused("save", message ? formError(message) : { status: "error" }, status, { rows, rowErrors });
  if (Object.keys(rowErrors).length) return refuse(null);
  if (changes.filter((c) => c.active).length > MAX_ACTIVE_ATTRIBUTES)
    return refuse(`${ATTRIBUTE_MESSAGES.activeLimit}. ${ATTRIBUTE_MESSAGES.activeLimitHelp}`);
  let saved: number;
  try {
    saved = await updateAttributes(scope, changes);
  } catch (err) {
    if (err instanceof ConflictError) return refuse(err.message, 409);
    if (err instanceof HttpError && err.message === ATTRIBUTE_MESSAGES.activeLimit)
      return refuse(`${err.message}. ${ATTRIBUTE_MESSAGES.activeLimitHelp}`);
    if (err instanceof HttpError) throw err;
    log.error("attribute update failed", { projectId: scope.project.id, error: getErrorMessage(err) });
    return redirectWithToast(request, attributesPath(scope), { kind: "error", title: ATTRIBUTE_MESSAGES.updateFailed });
  }
  return redirectWithToast(
    request,
    attributesPath(scope),
    saved
      ? { kind: "success", title: `${saved} attribute${saved === 1 ? "" : "s"} updated` }
      : { kind: "info", title: ATTRIBUTE_MESSAGES.noChanges },
  );
}

export const attributesPath = (scope: ProjectScope) => `/upload/${scope.project.id}/attributes`;
