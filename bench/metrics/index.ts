import type { Metric } from "../lib/types";
import { p1, p1Pg } from "./p1-grid-loader";
import { p1b, p1b1m, p1bPg } from "./p1b-deep-page";
import { p2 } from "./p2-project-page";
import { p4 } from "./p4-thumbnail";
import { p6 } from "./p6-ingest";
import { p8a } from "./p8a-grid-js";
import { p8b } from "./p8b-scroll";

/** Every metric `npm run bench` runs, in this order. */
export const metrics: Metric[] = [p1, p1Pg, p1b, p1bPg, p1b1m, p2, p4, p6, p8a, p8b];
