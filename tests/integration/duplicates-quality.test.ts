import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import type { Similarity } from "~/lib/similarity";
import { lookAlikes } from "~/models/duplicates.server";
import { insertImageRows } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { drawDemoImage } from "~/services/demo.server";
import { fileSimilarity } from "~/services/image-files.server";
import { freshDatabase, type TestDatabase } from "../helpers/db";
import { fakeFile, makeProject, makeUser, meta } from "../helpers/fixtures";

/**
 * How well "possible duplicate" works, measured: a library of 60 pictures (30 of the demo's, 30 of the OCR corpus's,
 * photo-like and text-on-paper alike), each edited as people do (resized, re-compressed, 5 % cropped, ±10 %
 * brightness, turned 90°), and 40 pictures not in the library. Every picture is hashed the product's way (from the
 * decode the derivatives are made of, as on upload) and looked up the product's way (the project's indexed quarters, then both hashes). An
 * edited copy counts as found when its closest look-alike is its own original; a flag on anything else is a false
 * one. The figures are printed; the goals: precision ≥ 0.95, and recall ≥ 0.9 on the edits other than turning.
 */
const OCR = path.join(__dirname, "../fixtures/ocr");
const crop = async (buf: Buffer, left: number, top: number) => {
  const { width = 0, height = 0 } = await sharp(buf).metadata();
  const area = {
    left: Math.round(width * left),
    top: Math.round(height * top),
    width: Math.round(width * 0.95),
    height: Math.round(height * 0.95),
  };
  return sharp(buf).extract(area).jpeg({ quality: 85 }).toBuffer();
};
const EDITS: Record<string, (buf: Buffer) => Promise<Buffer>> = {
  resized: (b) => sharp(b).resize({ width: 400 }).jpeg({ quality: 85 }).toBuffer(),
  recompressed: (b) => sharp(b).jpeg({ quality: 35 }).toBuffer(),
  "cropped 5 %": (b) => crop(b, 0.025, 0.025),
  brighter: (b) => sharp(b).modulate({ brightness: 1.1 }).jpeg({ quality: 85 }).toBuffer(),
  darker: (b) => sharp(b).modulate({ brightness: 0.9 }).jpeg({ quality: 85 }).toBuffer(),
  // Measured and printed, outside the goal's set: 5 % cut from one corner moves every feature, not only the edges.
  "cropped 5 % from a corner": (b) => crop(b, 0, 0),
  "turned 90°": (b) => sharp(b).rotate(90).jpeg({ quality: 85 }).toBuffer(),
};
const GOAL_EDITS = ["resized", "recompressed", "cropped 5 %", "brighter", "darker"];

const hashOf = async (buf: Buffer) => {
  const similarity = await fileSimilarity(buf);
  if (!similarity) throw new Error("A picture of the set was taken for a flat one");
  return similarity;
};

describe("near-duplicate quality on a made set", () => {
  let t: TestDatabase;
  let projectId = 0;
  let actor: Awaited<ReturnType<typeof makeUser>>["actor"];
  const ids: number[] = [];
  const queries: { edit: string; want: number | null; similarity: Similarity }[] = [];

  beforeAll(async () => {
    t = await freshDatabase("sqlite");
    actor = (await makeUser()).actor;
    projectId = (await makeProject([{ actor, role: "editor" }])).id;
    const ocrFiles = readdirSync(OCR).filter((f) => /\.jpg$/.test(f) && !f.startsWith("demo"));
    const library = [
      ...(await Promise.all(Array.from({ length: 30 }, (_, i) => drawDemoImage(i + 1, 800, 600)))),
      ...ocrFiles.slice(0, 30).map((f) => readFileSync(path.join(OCR, f))),
    ];
    const hashes = await Promise.all(library.map(hashOf));
    await insertImageRows(
      await projectScope(actor, projectId),
      hashes.map((similarity, i) => ({
        file: { ...fakeFile(50_000 + i), similarity },
        meta: meta(`Library ${i}`),
        at: 1_700_000_000_000 + i,
      })),
    );
    const rows = await db().selectFrom("images").select("id").where("project_id", "=", projectId).orderBy("id").execute();
    ids.push(...rows.map((r) => r.id));
    // Made side by side (sharp works off the main thread), in the same order every run.
    for (const [edit, make] of Object.entries(EDITS))
      queries.push(
        ...(await Promise.all(library.map(async (buf, i) => ({ edit, want: ids[i]!, similarity: await hashOf(await make(buf)) })))),
      );
    const strangers = await Promise.all(Array.from({ length: 40 }, (_, n) => drawDemoImage(500 + n, 800, 600)));
    queries.push(...(await Promise.all(strangers.map(async (buf) => ({ edit: "unrelated", want: null, similarity: await hashOf(buf) })))));
  }, 300_000);
  afterAll(async () => {
    await t.drop();
  });

  it("flags edited copies as possible duplicates of their originals with precision ≥ 0.95 and recall ≥ 0.9, turned copies held apart to recall ≥ 0.9", async () => {
    let right = 0;
    let wrong = 0;
    const found: Record<string, { hit: number; of: number }> = {};
    for (const q of queries) {
      const [closest] = await lookAlikes(db(), projectId, q.similarity, { limit: 1 });
      if (closest && closest.id === q.want) right += 1;
      else if (closest) wrong += 1;
      const tally = (found[q.edit] ??= { hit: 0, of: 0 });
      tally.of += 1;
      if (q.want === null ? !closest : closest?.id === q.want) tally.hit += 1;
    }
    const inGoal = GOAL_EDITS.map((e) => found[e]!);
    const recall = inGoal.reduce((s, f) => s + f.hit, 0) / inGoal.reduce((s, f) => s + f.of, 0);
    const precision = right / (right + wrong);
    console.log(
      `Near-duplicates (${ids.length} in the library, ${queries.length} uploads): precision ${precision.toFixed(3)} (${wrong} false flags), ` +
        `recall ${recall.toFixed(3)} on ${GOAL_EDITS.join(", ")}; per set: ` +
        Object.entries(found)
          .map(([e, f]) => `${e} ${f.hit}/${f.of}`)
          .join(", "),
    );
    expect(precision).toBeGreaterThanOrEqual(0.95);
    expect(recall).toBeGreaterThanOrEqual(0.9);
    // Outside the goal, held to it all the same: the lookup probes a turn within 3 bits only.
    const turned = found["turned 90°"]!;
    expect(turned.hit / turned.of).toBeGreaterThanOrEqual(0.9);
  });
});
