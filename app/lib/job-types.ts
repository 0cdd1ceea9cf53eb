/**
 * Every kind of background job, by the name kept in `jobs.type`. Each has exactly one handler in the registry the
 * runner is given (app/services/job-registry.server.ts, checked there against this list); `queue` takes only these.
 */
export const MAIL_JOB = "mail.send";
export const BULK_JOB = "bulk.action";
export const EXPORT_JOB = "attributes.export";
export const IMPORT_JOB = "attributes.import";
export const REIMPORT_JOB = "project.reimport";
export const PURGE_JOB = "objects.purge";
export const PURGE_MANY_JOB = "objects.purge-many";
export const REVIEW_DIGEST_JOB = "reviews.digest";
export const REGISTRATION_DIGEST_JOB = "registrations.digest";
export const OCR_JOB = "images.ocr";
export const POSITIONS_JOB = "images.remove-positions";

export const JOB_TYPES = [
  MAIL_JOB,
  BULK_JOB,
  EXPORT_JOB,
  IMPORT_JOB,
  REIMPORT_JOB,
  PURGE_JOB,
  PURGE_MANY_JOB,
  REVIEW_DIGEST_JOB,
  REGISTRATION_DIGEST_JOB,
  OCR_JOB,
  POSITIONS_JOB,
] as const;
export type JobType = (typeof JOB_TYPES)[number];
