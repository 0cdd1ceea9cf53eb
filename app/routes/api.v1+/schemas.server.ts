import { extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { AssignAttributeSchema, NewAttributeSchema } from "~/lib/attribute-rules";
import { dayStart } from "~/lib/capture";
import { MAX_ID } from "~/lib/ids";
import { BoardNameSchema, EXPIRY_CHOICES, keywordProblem, LIMITS, uniqueKeywords } from "~/lib/schemas";
import { MAX_PAGE } from "~/models/grid.server";

/**
 * The public API's shapes: the routes parse and answer with these, and the OpenAPI document (openapi.server.ts) is
 * generated from the same objects, so the two cannot say different things. Request bodies are strict: a field the
 * API does not know is refused, never ignored.
 */
extendZodWithOpenApi(z);

/** An id in a path (text, read as a number). */
const Id = z.coerce.number().int().min(1).max(MAX_ID);
/** An id in a JSON body: a number, nothing coerced into one. */
const BodyId = z.number().int().min(1).max(MAX_ID);
export const ProjectIdParam = z.object({ projectId: Id.openapi({ param: { name: "projectId", in: "path" }, example: 1 }) });
export const ImageIdParam = z.object({ imageId: Id.openapi({ param: { name: "imageId", in: "path" }, example: 42 }) });
export const BoardIdParam = z.object({
  boardId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "boardId", in: "path" }, example: "Xb3kP0aQz" }),
});

export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().openapi({ description: "What went wrong, in the product's words." }),
    errors: z.array(z.object({ pointer: z.string(), detail: z.string() })).optional(),
  })
  .openapi("Problem", { description: "RFC 9457 problem details." });

export const Role = z.enum(["viewer", "editor", "manager", "admin"]).openapi("Role");

export const ProjectSummary = z.object({ id: z.number().int(), name: z.string() }).openapi("ProjectSummary");
export const ProjectList = z.object({ items: z.array(ProjectSummary) }).openapi("ProjectList");
export const Project = ProjectSummary.extend({
  role: Role.openapi({ description: "The token's role here: its owner's, or viewer for a read-only token." }),
  canEdit: z.boolean(),
  canManage: z.boolean(),
  imageCount: z.number().int(),
}).openapi("Project");

export const ImageSummary = z.object({ id: z.number().int(), title: z.string(), keywords: z.array(z.string()) }).openapi("ImageSummary");
export const ImagePage = z
  .object({
    items: z.array(ImageSummary),
    next: z.string().nullable().openapi({ description: "Give as `after` for the next page; null on the last page." }),
  })
  .openapi("ImagePage");

/** `<attributeId>:<value>`: anything else is refused, not dropped (a dropped filter would answer the whole set). */
const AttributeFilter = z
  .string()
  .max(220)
  .regex(/^[1-9]\d{0,11}:.+$/s, "An attribute filter is <attributeId>:<value>");
const Day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "A day is YYYY-MM-DD")
  .refine((v) => dayStart(v) !== null, "Not a day (from 1970-01-01)");
export const ImagesQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(100),
    after: z.string().max(64).optional().openapi({ description: "The `next` of the previous page." }),
    q: z.string().max(400).optional().openapi({ description: "Keyword search, as in the grid's sidebar." }),
    smart: z.string().max(400).optional().openapi({ description: "A smart search phrase: turned into the project's tags." }),
    tags: z.string().max(2000).optional().openapi({ description: "Smart search tags, comma-separated (instead of `smart`)." }),
    f: z
      .union([AttributeFilter, z.array(AttributeFilter).max(50)])
      .optional()
      .openapi({ description: "Attribute filter `<attributeId>:<value>`, repeated (values of one attribute OR, across AND)." }),
    sort: z
      .enum(["added", "taken"])
      .optional()
      .openapi({ description: "`added` (the default): newest added first. `taken`: newest capture date first, images without one last." }),
    takenFrom: Day.optional().openapi({ description: "Only images taken on this day or after (the camera's clock, `YYYY-MM-DD`)." }),
    takenTo: Day.optional().openapi({ description: "Only images taken on this day or before (`YYYY-MM-DD`)." }),
  })
  .strict();

const FILE_VARIANTS = ["original", "preview", "thumbnail"] as const;
export const FileQuery = z
  .object({
    variant: z
      .enum(FILE_VARIANTS)
      .default("original")
      .openapi({ description: "The file as uploaded (`original`, a download), or its WebP `preview` or `thumbnail`." }),
  })
  .strict();

export const Image = z
  .object({
    id: z.number().int(),
    projectId: z.number().int(),
    title: z.string(),
    description: z.string(),
    keywords: z.array(z.string()),
    ocrText: z.string(),
    ocrByMachine: z.boolean().describe("True when Koala read the OCR text from the picture (OCR); a person's change makes it theirs."),
    takenAt: z.string().nullable().openapi({
      description: "When the photo was taken (EXIF), the camera's own clock without a zone (`2024-05-17T14:03:09`); null: unknown.",
      example: "2024-05-17T14:03:09",
    }),
    camera: z.object({ make: z.string(), model: z.string() }).openapi({ description: "The camera (EXIF); empty strings: unknown." }),
    location: z
      .object({ latitude: z.number(), longitude: z.number() })
      .nullable()
      .openapi({ description: "Where it was taken (EXIF GPS), kept only in projects whose managers allow it; null otherwise." }),
    possibleDuplicateOf: z.number().int().nullable().openapi({
      description:
        "The image of the project this one looked like when it was uploaded (a near-duplicate), until someone keeps both or deletes that image; null: none.",
    }),
    originalName: z.string(),
    mimeType: z.string(),
    sizeBytes: z.number().int(),
    width: z.number().int(),
    height: z.number().int(),
    rotation: z.number().int(),
    version: z.number().int().openapi({ description: "Moves on with every change; the ETag is built from it." }),
    createdAt: z.string().datetime(),
    updatedAt: z.string().datetime(),
    attributes: z.array(z.object({ attributeId: z.number().int(), name: z.string(), value: z.string() })),
  })
  .openapi("Image");

export const Board = z
  .object({
    id: z.string(),
    projectId: z.number().int(),
    title: z.string(),
    clientBoard: z.boolean(),
  })
  .openapi("Board");
export const BoardList = z.object({ items: z.array(Board) }).openapi("BoardList");

/** The pages' rules and messages (3 to 64 characters, none of ( ) & @ $ | % ~). */
const BoardTitle = BoardNameSchema.shape.title.openapi({
  type: "string",
  minLength: 3,
  maxLength: 64,
  description: "3 to 64 characters, none of ( ) & @ $ | % ~; unique in the project, whatever the case.",
});
export const NewBoard = z
  .object({
    title: BoardTitle,
    imageIds: z.array(BodyId).max(1000).optional().openapi({ description: "Images of the project to put on it at once." }),
  })
  .strict()
  .openapi("NewBoard");
export const BoardChange = z.object({ title: BoardTitle }).strict().openapi("BoardChange");

/** Ids of images of the board's project (each one checked: one outside it makes the whole request 404). */
const ImageIds = z
  .array(BodyId)
  .min(1, "Give at least one image id")
  .max(1000, "At most 1000 images per request")
  .openapi({ description: "Image ids of the project, 1 to 1000." });
export const BoardImages = z.object({ imageIds: ImageIds }).strict().openapi("BoardImages");
export const BoardTransfer = z
  .object({ imageIds: ImageIds, targetBoardId: z.string().min(1).max(64) })
  .strict()
  .openapi("BoardTransfer");
const Outcome = z.object({
  affected: z.number().int().openapi({ description: "Images the request changed." }),
  skipped: z.number().int().openapi({ description: "Images left as they were (already on the target board)." }),
});
export const BulkOutcome = Outcome.openapi("BulkOutcome");

/** The image panel's rules and messages (title 120, description 2,000, OCR 10,000 characters; keywords). */
const text = (max: number, name: string) =>
  z
    .string()
    .max(max, `${name} cannot be longer than ${max} characters`)
    .transform((v) => v.replace(/\r\n/g, "\n").trim());
const Keywords = z
  .array(z.string().max(200))
  .max(200)
  .transform(uniqueKeywords)
  .superRefine((list, ctx) => {
    const problem = keywordProblem(list);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi({
    description: `The whole list (it replaces the old one): at most ${LIMITS.keywords}, each ${LIMITS.keywordMin} to ${LIMITS.keywordMax} characters, without ( ) & @ * $ | % ~.`,
  });
export const ImageChange = z
  .object({
    title: text(LIMITS.title, "Title").optional(),
    description: text(LIMITS.description, "Description").optional(),
    keywords: Keywords.optional(),
    ocrText: text(LIMITS.ocr, "OCR text").optional(),
  })
  .strict()
  .openapi("ImageChange", { description: "The fields to change; those left out stay as they are." });
export const Rotation = z
  .object({ degrees: z.union([z.literal(90), z.literal(180), z.literal(270)]).openapi({ description: "Clockwise." }) })
  .strict()
  .openapi("Rotation");

export const ShareLink = z
  .object({
    id: z.number().int(),
    label: z.string().nullable(),
    recipient: z.string().nullable(),
    createdAt: z.string().datetime(),
    expiresAt: z.string().datetime().nullable(),
    revokedAt: z.string().datetime().nullable(),
    lastOpenedAt: z.string().datetime().nullable(),
    views: z.number().int(),
    downloads: z.number().int(),
    allowDownload: z.boolean(),
    showMetadata: z.boolean(),
  })
  .openapi("ShareLink");
export const ShareLinkList = z.object({ items: z.array(ShareLink) }).openapi("ShareLinkList");
export const NewShareLink = z
  .object({
    label: z.string().trim().min(1, "Please give the link a name (who or what it is for).").max(80, "At most 80 characters."),
    expiry: z.enum(EXPIRY_CHOICES).default("30").openapi({ description: "Days, or never." }),
    allowDownload: z.boolean().default(true),
    showMetadata: z.boolean().default(true),
  })
  .strict()
  .openapi("NewShareLink");
export const MadeShareLink = ShareLink.extend({
  url: z.string().url().openapi({ description: "The link itself: shown once, never stored readable." }),
}).openapi("MadeShareLink");
export const ShareLinkIdParam = BoardIdParam.extend({
  linkId: Id.openapi({ param: { name: "linkId", in: "path" }, example: 7 }),
});

export const Attribute = z
  .object({
    id: z.number().int(),
    name: z.string(),
    code: z.string(),
    active: z.boolean(),
    kind: z.enum(["wsc", "system", "user"]).openapi({ description: "wsc: imported; system; user: the ones values are assigned to." }),
  })
  .openapi("Attribute");
export const AttributeList = z.object({ items: z.array(Attribute) }).openapi("AttributeList");
/** The Manage Attributes page's rules and messages (spaces become underscores). */
export const NewAttribute = NewAttributeSchema.strict().openapi("NewAttribute");
export const AttributeAssignment = z
  .object({
    imageIds: ImageIds,
    value: AssignAttributeSchema.shape.value.openapi({ type: "string", minLength: 1, maxLength: 64 }),
    replace: z.boolean().default(false).openapi({ description: "Replace values the images hold already (else they are skipped)." }),
  })
  .strict()
  .openapi("AttributeAssignment");
export const AttributeIdParam = ProjectIdParam.extend({
  attributeId: Id.openapi({ param: { name: "attributeId", in: "path" }, example: 3 }),
});

export const NewUpload = z
  .object({
    fileName: z.string().trim().min(1, "A file name is required").max(255, "The file name is too long"),
    fileSize: z
      .number()
      .int()
      .min(0)
      .optional()
      .openapi({ description: "Bytes: an empty or too large file is refused at once, and the URL takes exactly this many." }),
  })
  .strict()
  .openapi("NewUpload");
export const Upload = z
  .object({
    key: z.string().openapi({ description: "Give it to POST /projects/{projectId}/images once the file is sent." }),
    uploadUrl: z.string().url().openapi({ description: "PUT the file's bytes here (no token: the URL is signed), within 15 minutes." }),
  })
  .openapi("Upload");
export const NewImage = z
  .object({
    key: z.string().min(1).max(200),
    title: text(LIMITS.title, "Title").optional().openapi({ description: "Default: the file name without its extension." }),
    description: text(LIMITS.description, "Description").optional(),
    keywords: Keywords.optional(),
    ocrText: text(LIMITS.ocr, "OCR text").optional(),
  })
  .strict()
  .openapi("NewImage");
export const UploadResults = z
  .object({
    items: z.array(
      z.object({
        name: z.string(),
        id: z.number().int().optional().openapi({ description: "The image made." }),
        error: z.string().optional().openapi({ description: "Why this file was refused (the others go on)." }),
      }),
    ),
  })
  .openapi("UploadResults");

export const ExportRequest = z
  .object({
    imageIds: z.array(BodyId).min(1).max(1000, "At most 1000 images per request").optional().openapi({
      description: "Up to 1,000 images to export (each must be in the filtered set); left out: every image of the filtered set.",
    }),
  })
  .strict()
  .openapi("ExportRequest");

/**
 * A bulk request on a project's images (the grid's bulk bar): the images listed, or every image of the set the
 * query's filters give (`all`), but those in `exceptIds`; and what to do to them. Up to 5,000 images change at once
 * (200); more are changed by a background job (202, its status at `Location`).
 */
export const BulkRequest = z
  .object({
    imageIds: ImageIds.optional(),
    all: z.literal(true).optional().openapi({ description: "Every image of the filtered set (instead of `imageIds`)." }),
    exceptIds: z.array(BodyId).max(1000).optional().openapi({ description: "With `all`: images left out." }),
    action: z.discriminatedUnion("op", [
      z
        .object({
          op: z.literal("keywords"),
          keywords: Keywords.openapi({ description: "Keywords added to each image (those it has already are kept once)." }),
        })
        .strict(),
      z
        .object({
          op: z.literal("attribute"),
          attributeId: BodyId,
          value: AssignAttributeSchema.shape.value.openapi({ type: "string", minLength: 1, maxLength: 64 }),
          replace: z.boolean().default(false),
        })
        .strict(),
      z
        .object({ op: z.literal("board"), boardId: z.string().min(1).max(64).openapi({ description: "Put each image on this board." }) })
        .strict(),
      z.object({ op: z.literal("delete") }).strict(),
    ]),
  })
  .strict()
  .superRefine((r, ctx) => {
    if ((r.imageIds === undefined) === (r.all === undefined))
      ctx.addIssue({ code: "custom", path: ["imageIds"], message: "Give either imageIds or all: true" });
    if (r.exceptIds && !r.all) ctx.addIssue({ code: "custom", path: ["exceptIds"], message: "exceptIds goes with all: true" });
  })
  .openapi("BulkRequest");

export const JobIdParam = z.object({ jobId: Id.openapi({ param: { name: "jobId", in: "path" }, example: 12 }) });
export const Job = z
  .object({
    id: z.number().int(),
    status: z.enum(["queued", "running", "done", "failed"]),
    progress: z.number().int().openapi({ description: "Images done so far, of `total`." }),
    total: z.number().int().nullable(),
    // Inline, not the BulkOutcome component: a nullable reference comes out as allOf [ref, null], which no value meets.
    result: Outcome.nullable().openapi({ description: "What it did, once done." }),
  })
  .openapi("Job");

/** The list's filters, and nothing else. */
// `sort` is taken (and changes nothing) so that a list's query string can be sent as it is.
export const FilterQuery = ImagesQuery.pick({
  q: true,
  smart: true,
  tags: true,
  f: true,
  sort: true,
  takenFrom: true,
  takenTo: true,
}).strict();
