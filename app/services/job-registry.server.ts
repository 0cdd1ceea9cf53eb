import {
  BULK_JOB,
  EXPORT_JOB,
  IMPORT_JOB,
  MAIL_JOB,
  OCR_JOB,
  POSITIONS_JOB,
  PURGE_JOB,
  PURGE_MANY_JOB,
  REGISTRATION_DIGEST_JOB,
  REIMPORT_JOB,
  REVIEW_DIGEST_JOB,
  type JobType,
} from "~/lib/job-types";
import { registrationDigestJob } from "./accounts.server";
import { exportJob } from "./attribute-export.server";
import { importJob } from "./attribute-import.server";
import { bulkJob } from "./bulk.server";
import type { JobDefinition } from "./jobs.server";
import { purgeJob, purgeManyJob } from "./ingest.server";
import { mailJob } from "./mail.server";
import { ocrJob } from "./ocr.server";
import { positionsJob } from "./position-removal.server";
import { reimportJob } from "./reimport.server";
import { reviewDigestJob } from "./sharing.server";

/**
 * Every kind of background job and its handler, in one map the runner is given (boot, `koala worker`, tests).
 * `satisfies` keeps it exhaustive: a job type without a handler, or a handler for a type `queue` does not know,
 * fails the type check instead of a job at run time.
 */
export const jobRegistry = {
  [MAIL_JOB]: mailJob,
  [BULK_JOB]: bulkJob,
  [EXPORT_JOB]: exportJob,
  [IMPORT_JOB]: importJob,
  [REIMPORT_JOB]: reimportJob,
  [PURGE_JOB]: purgeJob,
  [PURGE_MANY_JOB]: purgeManyJob,
  [REVIEW_DIGEST_JOB]: reviewDigestJob,
  [REGISTRATION_DIGEST_JOB]: registrationDigestJob,
  [OCR_JOB]: ocrJob,
  [POSITIONS_JOB]: positionsJob,
} as const satisfies Record<JobType, JobDefinition>;
