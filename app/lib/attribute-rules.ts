import { z } from "zod";

/**
 * Project attributes (spec 2 §5, spec 1 §5): the rules and messages shared by the browser (live validation) and the
 * server (actions and models), so every path (Manage Attributes, the image panel, bulk assign) says the same thing.
 */
export const ATTRIBUTE_NAME_MAX = 16;
/**
 * One value rule for every path (panel, bulk, CSV import, WSC manifest): 1 to 64 characters, the spec's board-level
 * reading rather than the panel's 16, so that no stored, imported or exported value is refused on another path. See
 * docs/decisions/0014-attributes.md.
 */
export const ATTRIBUTE_VALUE_MAX = 64;

export const ATTRIBUTE_MESSAGES = {
  nameRequired: "Please enter an Attribute Name",
  nameBlank: "Attribute Name cannot be blank",
  nameSpaces: "Attribute names cannot contain spaces; any spaces have been replaced with underscores",
  nameLength: `Attribute Name cannot be longer than ${ATTRIBUTE_NAME_MAX} characters`,
  nameSpecial: "Attribute Name cannot contain special characters",
  duplicate: "Duplicate Attribute Name has been given",
  exists: "Attribute name already exists. Please choose another name",
  createFailed: "Failed to Create New User Attribute",
  smartName: "Invalid input. Spaces, commas, double quotes, hyphens, and dashes are not allowed.",
  noChanges: "No changes made",
  updateFailed: "Failed to update attributes",
  activeLimit: "Attribute Active Limit Reached of 33",
  activeLimitHelp: "Please deselect other attributes before selecting new ones",
  deleteConfirm: "Please type 'DELETE' to confirm",
  cannotDelete: "Cannot delete this attribute",
  deleteFailed: "Failed to Delete Attribute",
  pickAttribute: "Please select an Attribute Name",
  valueRequired: "Please enter a value",
  valueBlank: "Value cannot be blank",
  // The spec's 'Value cannot be shorter than 1 character' cannot arise: a value is trimmed and an empty one is blank.
  valueLength: `Value cannot be longer than ${ATTRIBUTE_VALUE_MAX} characters`,
  valueSpecial: "Value cannot contain special characters",
  assigned: "Attributes successfully assigned",
  assignFailed: "Attributes could not be assigned.",
  removeExisting: "Please remove existing attribute values first",
  removeConfirm: "Please type 'REMOVE' to remove attribute",
  removed: "Attribute Removed",
  removeFailed: "Attribute could not be removed.",
  nameReserved: "Title, Keywords and Image ID are the CSV's own columns: please choose another name",
} as const;

/** Import Attributes CSV (spec 2 §5, §8): the dialogs' titles and texts. */
export const CSV_MESSAGES = {
  type: "Unsupported file format",
  typeHelp: "Please upload a CSV file",
  size: "File too large",
  sizeHelp: "Please upload a file that is less than 100MB",
  importError: "CSV Import Error",
  readError: "File Read Error",
  noImageId: "Image ID is not present in first column for all images",
  parse: "CSV Data could not be parsed",
  failed: "Image Attributes could not be imported",
} as const;
/** A refused import's title: the spec's 'File Read Error' when its text could not be read, else 'CSV Import Error'. */
export const csvRefusalTitle = (outcome: string) => (outcome === "unreadable" ? CSV_MESSAGES.readError : CSV_MESSAGES.importError);
export const CSV_MAX_BYTES = 100 * 1024 * 1024;

export const MAX_ACTIVE_ATTRIBUTES = 33;
export const SMART_NAME_MAX = 64;
export const VALUE_HINT = `1 to ${ATTRIBUTE_VALUE_MAX} characters; none of ( ) & @ $ | % ~`;

const SPECIAL = /[()&@$|%~]/;
/** Spaces, commas, double quotes, hyphens and the dashes (en, em, minus). */
const SMART_NAME_BAD = /[\s,"\-‐‑‒–—―−]/;

/** A typed attribute name as stored: trimmed, inner spaces as underscores. The one rule, in the browser and on the server. */
export const normalAttributeName = (raw: string) => raw.trim().replace(/\s+/g, "_");

/**
 * A name field's text while it is typed (with JavaScript): the spaces between words already shown as the underscore
 * they become; spaces before or after the name are left to `normalAttributeName`, which trims them (a space typed at
 * the end may yet be followed by a word). So `normalAttributeName(typedAttributeName(x))` is always
 * `normalAttributeName(x)`: a name of spaces only is blank on both paths, never underscores.
 */
export const typedAttributeName = (raw: string) => raw.replace(/(\S)\s+(?=\S)/g, "$1_");

const RESERVED = new Set(["title", "keywords", "image_id"]);

/** The first broken rule of an attribute name (already normalised), or null. */
export function attributeNameProblem(name: string): string | null {
  if (!name) return ATTRIBUTE_MESSAGES.nameBlank;
  if (name.length > ATTRIBUTE_NAME_MAX) return ATTRIBUTE_MESSAGES.nameLength;
  if (SPECIAL.test(name)) return ATTRIBUTE_MESSAGES.nameSpecial;
  // The export writes these columns itself and the import reads them as such: an attribute of the name would be
  // read back as the image's title (or refused as a column given twice).
  if (RESERVED.has(name.toLowerCase())) return ATTRIBUTE_MESSAGES.nameReserved;
  return null;
}

export function smartNameProblem(code: string): string | null {
  if (!code || code.length > SMART_NAME_MAX || SMART_NAME_BAD.test(code)) return ATTRIBUTE_MESSAGES.smartName;
  return null;
}

/** The first broken rule of a value (trimmed), or null. */
export function attributeValueProblem(value: string): string | null {
  if (!value) return ATTRIBUTE_MESSAGES.valueBlank;
  if (value.length > ATTRIBUTE_VALUE_MAX) return ATTRIBUTE_MESSAGES.valueLength;
  if (SPECIAL.test(value)) return ATTRIBUTE_MESSAGES.valueSpecial;
  return null;
}

/** Create Attribute: the name as typed; spaces become underscores (the form says so). */
export const NewAttributeSchema = z.object({
  name: z
    .string({ required_error: ATTRIBUTE_MESSAGES.nameRequired })
    .max(200, ATTRIBUTE_MESSAGES.nameLength)
    .transform(normalAttributeName)
    .superRefine((name, ctx) => {
      const problem = attributeNameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
});

/** Assign a value (image panel and bulk): which attribute, what value, and whether to replace values already there. */
export const AssignAttributeSchema = z.object({
  attribute: z.coerce
    .number({ required_error: ATTRIBUTE_MESSAGES.pickAttribute, invalid_type_error: ATTRIBUTE_MESSAGES.pickAttribute })
    .int()
    .positive(ATTRIBUTE_MESSAGES.pickAttribute),
  value: z
    .string({ required_error: ATTRIBUTE_MESSAGES.valueRequired })
    .max(1000, ATTRIBUTE_MESSAGES.valueLength)
    .transform((v) => v.trim())
    .superRefine((value, ctx) => {
      const problem = attributeValueProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  replace: z.literal("yes").optional(),
  /** On a client-level board: the person confirmed that every user sees the change. */
  confirmShared: z.literal("yes").optional(),
});
