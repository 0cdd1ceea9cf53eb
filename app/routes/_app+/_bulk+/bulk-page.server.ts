import { parseWithZod } from "@conform-to/zod";
import { data, redirect } from "@remix-run/node";
import { asDownload } from "~/lib/download-slots.server";
import { ConflictError, InvalidError, NotFoundError } from "~/lib/errors";
import { assignableAttribute, assignableAttributes, NotAssignable } from "~/models/attributes.server";
import { recordAudit } from "~/models/audit.server";
import { boardOfProject, boardsOfProject, createBoard, TARGET_GONE } from "~/models/boards.server";
import type { BulkOutcome, Picked } from "~/models/bulk.server";
import { countSelection } from "~/models/bulk.server";
import { requireEdit, scopeKey, type MemberScope } from "~/models/scope.server";
import { EXPORT_QUEUED, requestAttributeExport } from "~/services/attribute-export.server";
import { csvOfSelection, runBulk, zipOfSelection, type BulkAction } from "~/services/bulk.server";
import { readSelection, selectionCookie } from "~/web/selection.server";
import { ATTRIBUTE_MESSAGES, AssignAttributeSchema } from "../../../lib/attribute-rules";
import { withFilterQuery } from "../../../lib/grid-filter";
import type { BulkOp } from "../../../web/grid.server";
import { headerOf } from "../../../web/header.server";
import { combineHeaders, readForm, redirectWithToast } from "../../../web/http.server";
import {
  BOARD_MESSAGES,
  BoardNameSchema,
  BulkTargetSchema,
  DELETE_WORD,
  DOWNLOAD_LIMIT_MESSAGE,
  KeywordsSchema,
  MAX_DOWNLOAD,
  NEW_BOARD,
  RemoveImagesSchema,
  typedConfirmation,
} from "../../../lib/schemas";

/** The bulk actions each view offers (spec 1, bulk actions menu); the pages live at <grid path>/bulk/<op>. */
const OPS = {
  project: ["download", "add", "keywords", "delete", "attributes", "data", "export"],
  board: ["download", "move", "copy", "keywords", "remove", "attributes", "data", "export"],
} as const;
const READ_OPS = new Set(["download", "data", "export"]);
export type BulkPageOp = BulkOp;

export const SHARED_BOARD_WARNING = "This is a client-level board: changes will be visible for all users.";

const gridBase = (scope: MemberScope) =>
  scope.kind === "board" ? `/${scope.project.id}/board/${scope.board.id}` : `/client/${scope.project.id}`;
/** A grid narrowed by a filter (search, review) keeps it, on the way back and into the downloads. */
const filterQuery = (scope: MemberScope) => withFilterQuery("", scope.filter);
const gridPath = (scope: MemberScope) => gridBase(scope) + filterQuery(scope);

/** The op of the URL, when this view offers it and the person may use it; anything else is not found. */
function opOf(scope: MemberScope, raw: string | undefined): BulkPageOp {
  const op = (OPS[scope.kind] as readonly string[]).includes(raw ?? "") ? (raw as BulkPageOp) : null;
  if (!op) throw new NotFoundError("Page not found");
  if (!READ_OPS.has(op)) requireEdit(scope);
  return op;
}

async function pickedOf(request: Request, scope: MemberScope): Promise<Picked> {
  const selection = await readSelection(request, scopeKey(scope));
  return { all: selection.all, ids: selection.ids };
}

const cleared = (scope: MemberScope) => selectionCookie({ scope: scopeKey(scope), all: false, ids: [] });

/** The confirmation page of a bulk action: what is selected, and what the action needs to know. */
export async function bulkPageData(request: Request, scope: MemberScope, rawOp: string | undefined) {
  const op = opOf(scope, rawOp);
  const count = await countSelection(scope, await pickedOf(request, scope));
  if (!count) throw await redirectWithToast(request, gridPath(scope), { kind: "info", title: "No images are selected" });
  const boards = ["add", "copy", "move"].includes(op)
    ? (await boardsOfProject(scope)).filter((b) => scope.kind !== "board" || b.id !== scope.board.id)
    : [];
  return {
    op,
    count,
    back: gridPath(scope),
    files: { zip: `${gridBase(scope)}/bulk/zip${filterQuery(scope)}`, csv: `${gridBase(scope)}/bulk/csv${filterQuery(scope)}` },
    view: scope.kind,
    projectId: scope.project.id,
    boards,
    attributeChoices: op === "attributes" ? await assignableAttributes(scope) : [],
    /** The board the action starts from is client-level: moving, copying or removing asks for a confirmation. */
    sourceShared: scope.kind === "board" && scope.board.clientBoard,
    step: new URL(request.url).searchParams.get("step") === "2" ? 2 : 1,
    maxDownload: MAX_DOWNLOAD,
    header: headerOf(scope),
  };
}

const pluralImages = (n: number) => `${n.toLocaleString("en")} image${n === 1 ? "" : "s"}`;

function toastOf(op: BulkPageOp, outcome: BulkOutcome, board?: string) {
  const skipped = outcome.skipped ? ` (${outcome.skipped.toLocaleString("en")} already there)` : "";
  switch (op) {
    case "add":
      return `${pluralImages(outcome.affected)} added to “${board}”${skipped}`;
    case "copy":
      return `${pluralImages(outcome.affected)} copied to “${board}”${skipped}`;
    case "move":
      return `${pluralImages(outcome.affected)} moved to “${board}”${skipped}`;
    case "remove":
      return `${pluralImages(outcome.affected)} removed from this board`;
    case "delete":
      return `${pluralImages(outcome.affected)} deleted`;
    case "attributes":
      return `${ATTRIBUTE_MESSAGES.assigned}: ${pluralImages(outcome.affected)}${outcome.skipped ? ` (${outcome.skipped.toLocaleString("en")} kept the value they had)` : ""}`;
    default:
      return `Keywords added to ${pluralImages(outcome.affected)}${outcome.skipped ? ` (${outcome.skipped.toLocaleString("en")} already had them or were full)` : ""}`;
  }
}

/** A ZIP or CSV answer: streamed, named, never cached, and the selection is cleared as it goes. */
function download(body: ReadableStream<Uint8Array>, name: string, type: string, cookie: string, size?: number) {
  const headers = combineHeaders(
    {
      "Content-Type": type,
      "Content-Disposition": `attachment; filename="${name.replace(/[^\w.-]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(name)}`,
      "Cache-Control": "private, no-store",
    },
    size !== undefined && size >= 0 ? { "Content-Length": String(size) } : null,
    { "Set-Cookie": cookie },
  );
  return new Response(body, { status: 200, headers });
}

const stamp = () => new Date().toISOString().slice(0, 10);
const slug = (s: string) =>
  s
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 40) || "images";

/**
 * The files of Download (a ZIP) and Download images data (a CSV), from resource routes (…/bulk/zip, …/bulk/csv):
 * a page route's action cannot answer with a file.
 */
export async function bulkFile(request: Request, scope: MemberScope, kind: "zip" | "csv", meta: { ip: string | null }) {
  await readForm(request);
  const picked = await pickedOf(request, scope);
  const name = slug(scope.kind === "board" ? scope.board.title : scope.project.name);
  return asDownload(request, { client: `user:${scope.actor.id}` }, async () => {
    if (kind === "zip") {
      const count = await countSelection(scope, picked);
      if (count > MAX_DOWNLOAD) throw new InvalidError(DOWNLOAD_LIMIT_MESSAGE);
      const zip = await zipOfSelection(scope, picked);
      await recordAudit({
        action: "bulk.download",
        actorUserId: scope.actor.id,
        ip: meta.ip,
        subject: scope.kind === "board" ? `board:${scope.board.id}` : `project:${scope.project.id}`,
        detail: { images: zip.count },
      });
      return download(zip.stream, `${name}-${stamp()}.zip`, "application/zip", await cleared(scope), zip.size);
    }
    const csv = await csvOfSelection(scope, picked);
    return download(csv.stream, `${name}-images-${stamp()}.csv`, "text/csv; charset=utf-8", await cleared(scope));
  });
}

/** Runs the action the page confirmed. */
export async function bulkPageAction(request: Request, scope: MemberScope, rawOp: string | undefined) {
  const op = opOf(scope, rawOp);
  const picked = await pickedOf(request, scope);
  const form = await readForm(request);

  if (op === "download" || op === "data") throw new NotFoundError("Page not found"); // the files come from …/bulk/zip and …/bulk/csv
  if (op === "export") {
    await requestAttributeExport(scope, picked);
    return redirectWithToast(
      request,
      gridPath(scope),
      { kind: "success", title: EXPORT_QUEUED },
      { headers: { "Set-Cookie": await cleared(scope) } },
    );
  }
  let action: BulkAction;
  let boardTitle: string | undefined;
  if (op === "add" || op === "copy" || op === "move") {
    const submission = parseWithZod(form, { schema: BulkTargetSchema });
    if (submission.status !== "success") return data({ result: submission.reply(), error: null }, { status: 400 });
    const { target, newBoard, confirmShared } = submission.value;
    let targetId = target;
    if (target === NEW_BOARD) {
      const named = BoardNameSchema.safeParse({ title: newBoard ?? "" });
      if (!named.success)
        return data(
          { result: submission.reply({ fieldErrors: { newBoard: [named.error.issues[0]!.message] } }), error: null },
          { status: 400 },
        );
      try {
        const board = await createBoard(scope, { title: named.data.title });
        targetId = board.id;
        boardTitle = board.title;
      } catch (err) {
        if (err instanceof ConflictError)
          return data(
            { result: submission.reply({ fieldErrors: { newBoard: [BOARD_MESSAGES.existsLong] } }), error: null },
            { status: 409 },
          );
        throw err;
      }
    } else {
      const board = await boardOfProject(scope, target).catch((err: unknown) => {
        if (err instanceof NotFoundError) return null;
        throw err;
      });
      // Deleted since the page was drawn: said at the field, the selection kept for another choice.
      if (!board) return data({ result: submission.reply({ fieldErrors: { target: [TARGET_GONE] } }), error: null }, { status: 404 });
      boardTitle = board.title;
      if ((board.clientBoard || (op === "move" && scope.kind === "board" && scope.board.clientBoard)) && confirmShared !== "yes")
        return data({ result: submission.reply({ fieldErrors: { confirmShared: [SHARED_BOARD_WARNING] } }), error: null }, { status: 400 });
    }
    action = { op, target: targetId };
  } else if (op === "keywords") {
    const submission = parseWithZod(form, { schema: KeywordsSchema });
    if (submission.status !== "success") return data({ result: submission.reply(), error: null }, { status: 400 });
    action = { op, keywords: submission.value.keywords };
  } else if (op === "attributes") {
    const submission = parseWithZod(form, { schema: AssignAttributeSchema });
    if (submission.status !== "success") return data({ result: submission.reply(), error: null }, { status: 400 });
    const { attribute, value, replace, confirmShared } = submission.value;
    try {
      await assignableAttribute(scope, attribute);
    } catch (err) {
      if (!(err instanceof NotAssignable)) throw err;
      return data({ result: submission.reply({ fieldErrors: { attribute: [err.message] } }), error: null }, { status: 400 });
    }
    if (scope.kind === "board" && scope.board.clientBoard && confirmShared !== "yes")
      return data({ result: submission.reply({ fieldErrors: { confirmShared: [SHARED_BOARD_WARNING] } }), error: null }, { status: 400 });
    action = { op, attributeId: attribute, value, replace: replace === "yes" };
  } else if (op === "remove") {
    const schema = RemoveImagesSchema;
    const submission = parseWithZod(form, { schema });
    if (submission.status !== "success") return data({ result: submission.reply(), error: null }, { status: 400 });
    if (scope.kind === "board" && scope.board.clientBoard && submission.value.confirmShared !== "yes")
      return data({ result: submission.reply({ fieldErrors: { confirmShared: [SHARED_BOARD_WARNING] } }), error: null }, { status: 400 });
    action = { op };
  } else {
    const submission = parseWithZod(form, { schema: typedConfirmation(DELETE_WORD) });
    if (submission.status !== "success") return data({ result: submission.reply(), error: null }, { status: 400 });
    action = { op: "delete" };
  }

  const run = await runBulk(scope, picked, action);
  const headers = { "Set-Cookie": await cleared(scope) };
  if ("jobId" in run) throw redirect(`/jobs/${run.jobId}`, { headers });
  return redirectWithToast(request, gridPath(scope), { kind: "success", title: toastOf(op, run.outcome, boardTitle) }, { headers });
}
