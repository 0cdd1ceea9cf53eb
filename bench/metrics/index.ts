import type { Metric } from "../lib/types";
import { p1, p1Pg, p1Pg1m } from "./p1-grid-loader";
import { p1b, p1b1m, p1bPg, p1bPg1m } from "./p1b-deep-page";
import { p2, p2First } from "./p2-project-page";
import { p3 } from "./p3-shared-page";
import { p4 } from "./p4-thumbnail";
import { p5, p51m, p5Pg, p5Pg1m } from "./p5-search-loader";
import { p5b, p5bPg } from "./p5b-facets";
import { p5c, p5cPg } from "./p5c-smart-search";
import { p6 } from "./p6-ingest";
import { p6S3 } from "./p6-s3-ingest";
import { p7 } from "./p7-zip-download";
import { p7b, p7bPg } from "./p7b-bulk-add";
import { p8a } from "./p8a-grid-js";
import { p8b, p8bPg } from "./p8b-scroll";
import { p9, p9Pg } from "./p9-attribute-import";
import { p9b, p9bPg } from "./p9b-attribute-export";
import { p10 } from "./p10-load-mix";
import { p10two, p12 } from "./p10-2-instances";
import { p10pool } from "./p10-pool";
import { p11 } from "./p11-takeover";
import { p13, p13b } from "./p13-api-images";
import { p14 } from "./p14-ocr";
import { p14b } from "./p14b-ocr-busy";
import { p15, p15Pg } from "./p15-duplicates";
import { p10m } from "./p-10m";

/** Every metric `npm run bench` runs, in this order. */
export const metrics: Metric[] = [
  p1,
  p1Pg,
  p1Pg1m,
  p1b,
  p1bPg,
  p1b1m,
  p1bPg1m,
  p2,
  p2First,
  p3,
  p4,
  p5,
  p5Pg,
  p51m,
  p5Pg1m,
  p5b,
  p5bPg,
  p5c,
  p5cPg,
  p6,
  p6S3,
  p7,
  p7b,
  p7bPg,
  p8a,
  p8b,
  p8bPg,
  p9,
  p9Pg,
  p9b,
  p9bPg,
  p10,
  p10two,
  p10pool,
  p11,
  p12,
  p13,
  p13b,
  p14,
  p14b,
  p15,
  p15Pg,
  p10m,
];
