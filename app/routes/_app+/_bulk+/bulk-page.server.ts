import { parseWithZod } from "@conform-to/zod";
import { data, redirect } from "@remix-run/node";
import type { z } from "zod";
import { asDownload } from "~/lib/download-slots.server";
import { ConflictError, InvalidError, NotFoundError } from "~/lib/errors";
import { attachment } from "~/lib/file-names";
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
import {
  asksSharedConfirmation,
  BULK_OPS,
  bulkOpsOf,
  isBulkOp,
  SHARED_BOARD_WARNING,
  type BulkOp,
  type BulkWriteOp,
} from "../../../lib/bulk-ops";
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

export type BulkPageOp = BulkOp;

const gridBase = (scope: MemberScope) =>
  scope.kind === "board" ? `/${scope.project.id}/board/${scope.board.id}` : `/client/${scope.project.id}`;
/** A grid narrowed by a filter (search, review) keeps it, on the way back and into the downloads. */
const filterQuery = (scope: MemberScope) => withFilterQuery("", scope.filter);
const gridPath = (scope: MemberScope) => gridBase(scope) + filterQuery(scope);

/** The op of the URL (the pages live at <grid path>/bulk/<op>), when this view offers it; a write op needs an editor. */
function opOf(scope: MemberScope, raw: string | undefined): BulkPageOp {
  const op = raw && isBulkOp(raw) && bulkOpsOf(scope.kind, true).includes(raw) ? raw : null;
  if (!op) throw new NotFoundError("Page not found");
  if ("write" in BULK_OPS[op]) requireEdit(scope);
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
      "Content-Disposition": attachment(name),
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

/** What a confirmed form asks for: the action, the board it names (for the toast) and whether that board is client-level. */
interface Plan {
  action: BulkAction;
  board?: string;
  targetShared?: boolean;
  /** A board to create under this title, once the form is accepted: the action's target until then is NEW_BOARD. */
  newBoard?: string;
}
/** Why a form is refused: said at one of its fields, the selection kept for another try. */
interface Refusal {
  field: string;
  message: string;
  status: number;
}
interface WriteOp<S extends z.ZodTypeAny> {
  schema: S;
  plan(scope: MemberScope, value: z.output<S>): Promise<Plan | Refusal>;
}
const writeOp = <S extends z.ZodTypeAny>(op: WriteOp<S>) => op;

/** Add, Copy and Move: to a board of the project, or to a new one made only once the form is accepted. */
const toBoard = (op: "add" | "copy" | "move") =>
  writeOp({
    schema: BulkTargetSchema,
    async plan(scope, { target, newBoard }) {
      if (target === NEW_BOARD) {
        const named = BoardNameSchema.safeParse({ title: newBoard ?? "" });
        if (!named.success) return { field: "newBoard", message: named.error.issues[0]!.message, status: 400 };
        return { action: { op, target }, board: named.data.title, targetShared: false, newBoard: named.data.title };
      }
      const board = await boardOfProject(scope, target).catch((err: unknown) => {
        if (err instanceof NotFoundError) return null;
        throw err;
      });
      // Deleted since the page was drawn.
      if (!board) return { field: "target", message: TARGET_GONE, status: 404 };
      return { action: { op, target }, board: board.title, targetShared: board.clientBoard };
    },
  });

/** Each write action: the form it reads and what it makes of it (the read actions have no form here). */
const WRITE_OPS: { [K in BulkWriteOp]: WriteOp<z.ZodTypeAny> } = {
  add: toBoard("add"),
  copy: toBoard("copy"),
  move: toBoard("move"),
  keywords: writeOp({
    schema: KeywordsSchema,
    plan: async (_scope, { keywords }) => ({ action: { op: "keywords", keywords } }),
  }),
  attributes: writeOp({
    schema: AssignAttributeSchema,
    async plan(scope, { attribute, value, replace }) {
      try {
        await assignableAttribute(scope, attribute);
      } catch (err) {
        if (err instanceof NotAssignable) return { field: "attribute", message: err.message, status: 400 };
        throw err;
      }
      return { action: { op: "attributes", attributeId: attribute, value, replace: replace === "yes" } };
    },
  }),
  remove: writeOp({ schema: RemoveImagesSchema, plan: async () => ({ action: { op: "remove" } }) }),
  delete: writeOp({ schema: typedConfirmation(DELETE_WORD), plan: async () => ({ action: { op: "delete" } }) }),
};

const isWriteOp = (op: BulkPageOp): op is BulkWriteOp => Object.hasOwn(WRITE_OPS, op);

/** Runs the action the page confirmed. */
export async function bulkPageAction(request: Request, scope: MemberScope, rawOp: string | undefined) {
  const op = opOf(scope, rawOp);
  const picked = await pickedOf(request, scope);
  const form = await readForm(request);

  if (op === "export") {
    await requestAttributeExport(scope, picked);
    return redirectWithToast(
      request,
      gridPath(scope),
      { kind: "success", title: EXPORT_QUEUED },
      { headers: { "Set-Cookie": await cleared(scope) } },
    );
  }
  // Download and Download images data post to …/bulk/zip and …/bulk/csv: their answer is a file.
  if (!isWriteOp(op)) throw new NotFoundError("Page not found");

  const { schema, plan: planOf } = WRITE_OPS[op];
  const submission = parseWithZod(form, { schema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  const refuse = ({ field, message, status }: Refusal) =>
    data({ result: submission.reply({ fieldErrors: { [field]: [message] } }) }, { status });

  const plan = await planOf(scope, submission.value);
  if ("field" in plan) return refuse(plan);
  const source = scope.kind === "board" && scope.board.clientBoard;
  // Asked before anything is made: a new board is created only for a form that is accepted.
  if (asksSharedConfirmation(op, { source, target: plan.targetShared }) && submission.value.confirmShared !== "yes")
    return refuse({ field: "confirmShared", message: SHARED_BOARD_WARNING, status: 400 });
  let action = plan.action;
  if (plan.newBoard !== undefined) {
    try {
      const board = await createBoard(scope, { title: plan.newBoard });
      if ("target" in action) action = { ...action, target: board.id };
    } catch (err) {
      if (err instanceof ConflictError) return refuse({ field: "newBoard", message: BOARD_MESSAGES.existsLong, status: 409 });
      throw err;
    }
  }

  const run = await runBulk(scope, picked, action);
  const headers = { "Set-Cookie": await cleared(scope) };
  if ("jobId" in run) throw redirect(`/jobs/${run.jobId}`, { headers });
  return redirectWithToast(request, gridPath(scope), { kind: "success", title: toastOf(op, run.outcome, plan.board) }, { headers });
}
