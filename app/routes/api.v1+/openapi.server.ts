import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  Attribute,
  AttributeAssignment,
  AttributeIdParam,
  AttributeList,
  Board,
  BoardChange,
  BoardImages,
  BoardTransfer,
  BulkOutcome,
  BulkRequest,
  Job,
  JobIdParam,
  FilterQuery,
  ExportRequest,
  FileQuery,
  ImageChange,
  MadeShareLink,
  NewImage,
  NewUpload,
  Upload,
  UploadResults,
  NewAttribute,
  NewShareLink,
  Rotation,
  ShareLinkIdParam,
  ShareLinkList,
  BoardIdParam,
  BoardList,
  Image,
  ImageIdParam,
  ImagePage,
  ImagesQuery,
  NewBoard,
  Problem,
  Project,
  ProjectIdParam,
  ProjectList,
} from "./schemas.server";

/**
 * The OpenAPI 3.1 document of /api/v1, generated from the schemas the routes parse and answer with. Every operation
 * a route answers is listed here once; the API tests validate every answer they get against this document, so an
 * operation missing here, or answering otherwise than it says, fails them.
 */
const problems = (...statuses: number[]): RouteConfig["responses"] =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: DESCRIPTIONS[status] ?? "A problem", content: { "application/problem+json": { schema: Problem } } },
    ]),
  );
const DESCRIPTIONS: Record<number, string> = {
  400: "Bad input: `detail` says what, `errors` where",
  401: "No token, or one unknown, revoked or expired",
  403: "The token's role here does not allow this (a read-only token, a viewer)",
  404: "Not found, or outside the token's reach",
  409: "A name already taken; or, without If-Match, an edit that met another one committing",
  412: "The image changed since the version given in If-Match",
  413: "The body is over 1 MiB",
  415: "The body is not JSON",
  422: "The file is not an image Koala takes (type, size, pixels, damage)",
  429: "Over the token's rate limit: wait Retry-After seconds",
};
const READ = [401, 404, 429];
const WRITE = [400, 401, 403, 404, 413, 415, 429];
const json = <T extends z.ZodTypeAny>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

function operations(registry: OpenAPIRegistry) {
  const auth = [{ token: [] }];
  const add = (config: Omit<RouteConfig, "security">) => registry.registerPath({ ...config, security: auth });

  add({
    method: "get",
    path: "/projects",
    operationId: "listProjects",
    summary: "The projects the token reaches",
    tags: ["Projects"],
    responses: { 200: json(ProjectList, "The projects, by name"), ...problems(401, 429) },
  });
  add({
    method: "get",
    path: "/projects/{projectId}",
    operationId: "getProject",
    summary: "A project, the token's role in it and its image count",
    tags: ["Projects"],
    request: { params: ProjectIdParam },
    responses: { 200: json(Project, "The project"), 304: { description: "Not modified" }, ...problems(...READ) },
  });
  add({
    method: "get",
    path: "/projects/{projectId}/images",
    operationId: "listImages",
    summary: "A page of the project's images, newest first, with the grid's filters",
    tags: ["Images"],
    request: { params: ProjectIdParam, query: ImagesQuery },
    responses: { 200: json(ImagePage, "A page"), 304: { description: "Not modified" }, ...problems(400, ...READ) },
  });
  add({
    method: "get",
    path: "/images/{imageId}",
    operationId: "getImage",
    summary: "An image's details and attribute values",
    tags: ["Images"],
    request: { params: ImageIdParam },
    responses: { 200: json(Image, "The image; its ETag is its version"), 304: { description: "Not modified" }, ...problems(...READ) },
  });
  const ifMatch = z.object({
    "If-Match": z
      .string()
      .optional()
      .openapi({ description: 'The image\'s ETag (`"v<version>"`) as read: if it changed since, 412 and nothing changes.' }),
  });
  add({
    method: "patch",
    path: "/images/{imageId}",
    operationId: "updateImage",
    summary: "Changes an image's title, description, keywords or OCR text, as a new version",
    tags: ["Images"],
    request: {
      params: ImageIdParam,
      headers: ifMatch,
      body: { required: true, content: { "application/json": { schema: ImageChange } } },
    },
    responses: { 200: json(Image, "The image as saved, with its new ETag"), ...problems(...WRITE, 409, 412) },
  });
  add({
    method: "post",
    path: "/images/{imageId}/rotate",
    operationId: "rotateImage",
    summary: "Turns an image clockwise, as a new version",
    tags: ["Images"],
    request: { params: ImageIdParam, headers: ifMatch, body: { required: true, content: { "application/json": { schema: Rotation } } } },
    responses: { 200: json(Image, "The image as saved, with its new ETag"), ...problems(...WRITE, 409, 412) },
  });
  const binary = (description: string, type: string) => ({
    description,
    content: { [type]: { schema: z.string().openapi({ format: "binary" }) } },
  });
  add({
    method: "get",
    path: "/images/{imageId}/file",
    operationId: "getImageFile",
    summary: "The image's bytes: the original as uploaded (a download), or its WebP preview or thumbnail",
    tags: ["Images"],
    request: { params: ImageIdParam, query: FileQuery },
    responses: {
      200: {
        ...binary("The file", "image/*"),
        headers: {
          ETag: { schema: { type: "string" }, description: "The content's key: send it as If-None-Match" },
          "Content-Disposition": { schema: { type: "string" }, description: "The original only: a download, named as uploaded" },
        },
      },
      302: { description: "MEDIA_OFFLOAD=presigned: a preview or thumbnail at a signed URL of the object store" },
      304: { description: "Not modified" },
      ...problems(400, 401, 404),
      429: {
        description: "Over the token's rate limit, or the person's downloads at once are all taken: wait Retry-After seconds",
        content: { "application/problem+json": { schema: Problem } },
      },
    },
  });
  add({
    method: "delete",
    path: "/images/{imageId}",
    operationId: "deleteImage",
    summary: "Deletes an image with its versions; its files are removed in the background",
    tags: ["Images"],
    request: { params: ImageIdParam, headers: ifMatch },
    responses: { 204: { description: "Deleted" }, ...problems(401, 403, 404, 412, 429) },
  });
  add({
    method: "get",
    path: "/projects/{projectId}/boards",
    operationId: "listBoards",
    summary: "The project's boards, by title",
    tags: ["Boards"],
    request: { params: ProjectIdParam },
    responses: { 200: json(BoardList, "The boards"), ...problems(...READ) },
  });
  add({
    method: "post",
    path: "/projects/{projectId}/boards",
    operationId: "createBoard",
    summary: "A new board, with images of the project on it or empty",
    tags: ["Boards"],
    request: { params: ProjectIdParam, body: { required: true, content: { "application/json": { schema: NewBoard } } } },
    responses: { 201: json(Board, "The board made"), ...problems(...WRITE, 409) },
  });
  add({
    method: "get",
    path: "/boards/{boardId}",
    operationId: "getBoard",
    summary: "A board",
    tags: ["Boards"],
    request: { params: BoardIdParam },
    responses: { 200: json(Board, "The board"), 304: { description: "Not modified" }, ...problems(...READ) },
  });
  add({
    method: "patch",
    path: "/boards/{boardId}",
    operationId: "renameBoard",
    summary: "Renames a board",
    tags: ["Boards"],
    request: { params: BoardIdParam, body: { required: true, content: { "application/json": { schema: BoardChange } } } },
    responses: { 200: json(Board, "The board renamed"), ...problems(...WRITE, 409) },
  });
  add({
    method: "delete",
    path: "/boards/{boardId}",
    operationId: "deleteBoard",
    summary: "Deletes a board; its images stay in the project",
    tags: ["Boards"],
    request: { params: BoardIdParam },
    responses: { 204: { description: "Deleted" }, ...problems(401, 403, 404, 429) },
  });
  add({
    method: "post",
    path: "/boards/{boardId}/images",
    operationId: "addToBoard",
    summary: "Puts images of the board's project on the board; those already on it are skipped",
    tags: ["Boards"],
    request: { params: BoardIdParam, body: { required: true, content: { "application/json": { schema: BoardImages } } } },
    responses: { 200: json(BulkOutcome, "What changed"), ...problems(...WRITE) },
  });
  for (const [op, summary] of [
    ["remove", "Takes images off the board; they stay in the project"],
    ["copy", "Copies images of this board to another board of the project"],
    ["move", "Moves images of this board to another board of the project"],
  ] as const)
    add({
      method: "post",
      path: `/boards/{boardId}/images/${op}`,
      operationId: `${op}BoardImages`,
      summary,
      tags: ["Boards"],
      request: {
        params: BoardIdParam,
        body: { required: true, content: { "application/json": { schema: op === "remove" ? BoardImages : BoardTransfer } } },
      },
      responses: { 200: json(BulkOutcome, "What changed"), ...problems(...WRITE) },
    });
  add({
    method: "get",
    path: "/boards/{boardId}/share-links",
    operationId: "listShareLinks",
    summary: "The board's public read-only links, with their views and downloads",
    tags: ["Sharing"],
    request: { params: BoardIdParam },
    responses: { 200: json(ShareLinkList, "The links, newest first"), ...problems(403, ...READ) },
  });
  add({
    method: "post",
    path: "/boards/{boardId}/share-links",
    operationId: "createShareLink",
    summary: "A new public read-only link to the board; its URL is in this answer only",
    tags: ["Sharing"],
    request: { params: BoardIdParam, body: { required: true, content: { "application/json": { schema: NewShareLink } } } },
    responses: { 201: json(MadeShareLink, "The link made, with its URL"), ...problems(...WRITE) },
  });
  add({
    method: "delete",
    path: "/boards/{boardId}/share-links/{linkId}",
    operationId: "revokeShareLink",
    summary: "Revokes a link: it stops working at once",
    tags: ["Sharing"],
    request: { params: ShareLinkIdParam },
    responses: { 204: { description: "Revoked" }, ...problems(401, 403, 404, 429) },
  });
  add({
    method: "get",
    path: "/projects/{projectId}/attributes",
    operationId: "listAttributes",
    summary: "The project's attributes, in the order they were made",
    tags: ["Attributes"],
    request: { params: ProjectIdParam },
    responses: { 200: json(AttributeList, "The attributes"), ...problems(...READ) },
  });
  add({
    method: "post",
    path: "/projects/{projectId}/attributes",
    operationId: "createAttribute",
    summary: "A new user attribute (managers); inactive when the project has 33 active ones",
    tags: ["Attributes"],
    request: { params: ProjectIdParam, body: { required: true, content: { "application/json": { schema: NewAttribute } } } },
    responses: { 201: json(Attribute, "The attribute made"), ...problems(...WRITE, 409) },
  });
  add({
    method: "post",
    path: "/projects/{projectId}/attributes/{attributeId}/values",
    operationId: "assignAttribute",
    summary: "One value of a user attribute on each image given; images holding one keep it unless `replace`",
    tags: ["Attributes"],
    request: { params: AttributeIdParam, body: { required: true, content: { "application/json": { schema: AttributeAssignment } } } },
    responses: { 200: json(BulkOutcome, "What changed"), ...problems(...WRITE) },
  });
  add({
    method: "post",
    path: "/projects/{projectId}/uploads",
    operationId: "signUpload",
    summary: "Upload step 1: a signed URL to PUT one file to, and the key to register it by",
    tags: ["Uploads"],
    request: { params: ProjectIdParam, body: { required: true, content: { "application/json": { schema: NewUpload } } } },
    responses: { 201: json(Upload, "Where to send the file"), ...problems(...WRITE, 422) },
  });
  add({
    method: "post",
    path: "/projects/{projectId}/images",
    operationId: "registerUpload",
    summary: "Upload step 3: the file sent to the signed URL becomes an image, with its details",
    tags: ["Uploads"],
    request: { params: ProjectIdParam, body: { required: true, content: { "application/json": { schema: NewImage } } } },
    responses: { 201: json(Image, "The image made (the same key again: the same image)"), ...problems(...WRITE, 422) },
  });
  add({
    method: "post",
    path: "/projects/{projectId}/files",
    operationId: "uploadFiles",
    summary: "Direct upload: up to 20 images in one multipart/form-data request, each in a part named files",
    tags: ["Uploads"],
    request: {
      params: ProjectIdParam,
      body: {
        required: true,
        content: {
          "multipart/form-data": {
            schema: z.object({ files: z.array(z.string().openapi({ format: "binary" })) }).openapi({ description: "Parts named files." }),
          },
        },
      },
    },
    responses: {
      201: json(UploadResults, "At least one image made; each file's outcome"),
      422: json(UploadResults, "No image made; each file's reason"),
      ...problems(400, 401, 403, 404, 413, 415, 429),
    },
  });
  add({
    method: "post",
    path: "/projects/{projectId}/images/bulk",
    operationId: "bulkImages",
    summary: "Adds keywords, assigns an attribute value, puts on a board or deletes: images listed, or all of the filtered set",
    tags: ["Images"],
    request: {
      params: ProjectIdParam,
      query: FilterQuery,
      body: { required: true, content: { "application/json": { schema: BulkRequest } } },
    },
    responses: {
      200: json(BulkOutcome, "Done at once (up to 5,000 images)"),
      202: {
        description: "More than 5,000 images: a background job does it, in chunks; follow it at `Location` (GET /jobs/{jobId})",
        headers: { Location: { schema: { type: "string" }, description: "The job's address" } },
        content: { "application/json": { schema: Job } },
      },
      ...problems(...WRITE),
    },
  });
  add({
    method: "get",
    path: "/jobs/{jobId}",
    operationId: "getJob",
    summary: "A background job's progress and, once done, what it did (only for the token that started it)",
    tags: ["Jobs"],
    request: { params: JobIdParam },
    responses: { 200: json(Job, "The job"), ...problems(...READ) },
  });
  add({
    method: "post",
    path: "/projects/{projectId}/export.csv",
    operationId: "exportCsv",
    summary: "The images' metadata and attribute values as CSV: those listed, or all of the filtered set",
    tags: ["Images"],
    request: {
      params: ProjectIdParam,
      query: FilterQuery,
      body: { required: false, content: { "application/json": { schema: ExportRequest } } },
    },
    responses: {
      200: { description: "The CSV file, streamed", content: { "text/csv": { schema: z.string() } } },
      ...problems(400, 401, 404, 413, 415, 429),
    },
  });
}

let cached: object | null = null;

/** The document (built once per process: it depends on the code only). */
export function openApiDocument(): object {
  if (cached) return cached;
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "token", {
    type: "http",
    scheme: "bearer",
    description: "A personal access token from your profile (Profile → Access tokens).",
  });
  operations(registry);
  cached = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Koala API",
      version: "1.0.0",
      description:
        "The image library's public API. Every request carries a personal access token; anything outside its reach is 404. " +
        "Errors are RFC 9457 problem documents. See /api/docs.",
    },
    servers: [{ url: "/api/v1" }],
  });
  return cached;
}
