/**
 * Builds one bench dataset into the database and DATA_DIR the environment names (see lib/datasets.ts):
 * a bench user (password + TOTP), one project with four attributes, 8 real image files stored through the
 * app's storeImageFile (or, with `originalBytes`, one noise PNG of about that size per image), and N image rows
 * pointing at them, with keywords and attribute values, all drawn from
 * seeded generators so every build is the same. Rows go in through the app's own models: on SQLite
 * insertImageRows and setAttributeValues, 1000 at a time; on PostgreSQL loadImagesInBulk (COPY). seedLargeProject is not used: its timestamps follow the wall clock
 * and it writes no attribute values.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { config, loadConfig, setConfig } from "~/config.server";
import { db, dialect } from "~/db/connection.server";
import { hashPassword } from "~/lib/crypto.server";
import type { Actor } from "~/models/actor";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { loadImagesInBulk } from "~/models/bulk-load.server";
import { insertImageRows, type StoredImageFile } from "~/models/images.server";
import { addMember, createProject } from "~/models/projects.server";
import { projectScope } from "~/models/scope.server";
import { createUser } from "~/models/users.server";
import { openDatabase } from "~/services/boot.server";
import { demoMetadata, drawDemoImage, seeded } from "~/services/demo.server";
import { storeImageFile } from "~/services/image-files.server";
import type { Dataset, DatasetName } from "../lib/datasets";

const spec = JSON.parse(process.env.BENCH_DATASET ?? "null") as {
  name: DatasetName;
  count: number;
  originalBytes: number | null;
  generatorVersion: number;
  user: { email: string; password: string; totpSecret: string };
} | null;
if (!spec) throw new Error("BENCH_DATASET is not set; run through npm run bench");

/** Fixed clock: image i was taken BASE + i seconds, so the grid order (newest first) is the reverse of i. */
const BASE = Date.UTC(2024, 0, 1);
const BATCH = 1000;
const ATTRIBUTES = [
  { name: "Region", code: "region", type: 1 as const, values: ["North", "South", "East", "West"] },
  { name: "Channel", code: "channel", type: 2 as const, values: ["Supermarket", "Convenience", "Online", "Wholesale"] },
  { name: "Quality", code: "quality", type: 3 as const, values: ["Good", "Fair", "Poor"] },
  { name: "Season", code: "season", type: 3 as const, values: ["Summer", "Winter", "Spring", "Autumn"] },
];

const started = Date.now();
setConfig(loadConfig(process.env));
const connection = await openDatabase();
const say = (line: string) => process.stdout.write(`${line}\n`);

const user = await createUser({
  email: spec.user.email,
  name: "Bench",
  surname: "Runner",
  role: "user",
  status: "active",
  password_hash: await hashPassword(spec.user.password),
  totp_secret: spec.user.totpSecret,
  terms_acknowledged_at: BASE,
  country_code: "ZA",
  language_code: "en",
});
const actor: Actor = { id: user.id, role: user.role };
const projectName = `Bench ${spec.name}`;
const project = await createProject({ name: projectName });
await addMember(project.id, user.id, "manager");
const scope = await projectScope(actor, project.id);
const attributes: { id: number; values: string[] }[] = [];
for (const a of ATTRIBUTES) attributes.push({ id: await createAttribute(scope, a), values: a.values });

/** A square PNG of seeded noise, stored without compression: about `bytes` long, whatever zlib would make of it. */
async function noisePng(n: number, bytes: number): Promise<Buffer> {
  const side = Math.round(Math.sqrt(bytes / 3));
  const rnd = seeded(200_000 + n);
  const raw = Buffer.alloc(side * side * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = Math.floor(rnd() * 256);
  return sharp(raw, { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

const files: StoredImageFile[] = [];
if (spec.originalBytes) for (let i = 0; i < spec.count; i++) files.push(await storeImageFile(await noisePng(i, spec.originalBytes)));
else for (let i = 0; i < 8; i++) files.push(await storeImageFile(await drawDemoImage(100_000 + i, 800, 600)));

let lastReport = 0;
const report = (end: number) => {
  if (end - lastReport >= spec.count / 10 || end === spec.count) {
    lastReport = end;
    say(`${end.toLocaleString("en")} / ${spec.count.toLocaleString("en")} images (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
};
/**
 * Image i's file: one of the 8 stored ones, with hashes and a capture time of its own (seeded), as if each were a
 * different photo: the near-duplicate lookup (P15) and the capture-date order see a million distinct pictures. The
 * hashes are uniform; real pictures' cluster (many shelves look alike), which makes the lookup's quarters fuller.
 */
const hex16 = (rnd: () => number) =>
  Array.from({ length: 4 }, () =>
    Math.floor(rnd() * 0x10000)
      .toString(16)
      .padStart(4, "0"),
  ).join("");
const fileOf = (i: number): StoredImageFile => {
  const rnd = seeded(300_000 + i);
  return {
    ...files[i % files.length]!,
    similarity: { phash: hex16(rnd), dhash: hex16(rnd), turned: [] },
    capture: { takenAt: BASE / 1000 - Math.floor(rnd() * 3 * 365 * 86_400), cameraMake: "Bench", cameraModel: "Camera", gps: null },
  };
};

/** Image i's attribute values: each attribute with probability 0.8, from the image's own seed. */
const valuesOf = (i: number) => {
  const rnd = seeded(i + 1);
  return attributes.filter(() => rnd() < 0.8).map((a) => ({ attributeId: a.id, value: a.values[Math.floor(rnd() * a.values.length)]! }));
};
// PostgreSQL: the same rows through COPY (models/bulk-load.server.ts), a fraction of the batches' time.
if (dialect() === "postgres")
  await loadImagesInBulk(
    scope,
    spec.count,
    (i) => ({
      file: fileOf(i),
      meta: demoMetadata(i + 1),
      at: BASE + i * 1000,
      values: valuesOf(i),
    }),
    report,
  );
else
  for (let start = 0; start < spec.count; start += BATCH) {
    const end = Math.min(spec.count, start + BATCH);
    const rows = [];
    for (let i = start; i < end; i++) rows.push({ file: fileOf(i), meta: demoMetadata(i + 1), at: BASE + i * 1000 });
    await insertImageRows(scope, rows);
    const inserted = await db()
      .selectFrom("images")
      .select(["id", "created_at"])
      .where("project_id", "=", project.id)
      .where("created_at", ">=", BASE + start * 1000)
      .where("created_at", "<", BASE + end * 1000)
      .execute();
    await setAttributeValues(
      scope,
      inserted.flatMap(({ id, created_at }) => valuesOf((created_at - BASE) / 1000).map((v) => ({ imageId: id, ...v }))),
    );
    report(end);
  }

// (On PostgreSQL, loadImagesInBulk has vacuumed and analysed the tables it loaded.)

const first = await db()
  .selectFrom("images")
  .select(["id", "thumb_key"])
  .where("project_id", "=", project.id)
  .where("created_at", "=", BASE + (spec.count - 1) * 1000)
  .executeTakeFirstOrThrow();
const last = await db()
  .selectFrom("images")
  .select(["id", "title"])
  .where("project_id", "=", project.id)
  .where("created_at", "=", BASE)
  .executeTakeFirstOrThrow();
const dataset: Dataset = {
  name: spec.name,
  count: spec.count,
  dataDir: config().dataDir,
  databaseUrl: process.env.DATABASE_URL ?? null,
  projectId: project.id,
  projectName,
  email: spec.user.email,
  password: spec.user.password,
  totpSecret: spec.user.totpSecret,
  firstImage: { id: first.id, thumbKey: first.thumb_key },
  lastImage: { id: last.id, title: last.title },
  generatorVersion: spec.generatorVersion,
  builtAt: new Date().toISOString(),
  buildSeconds: Math.round((Date.now() - started) / 100) / 10,
};
await connection.close();
writeFileSync(path.join(config().dataDir, "dataset.json"), `${JSON.stringify(dataset, null, 2)}\n`);
say(`built in ${dataset.buildSeconds} s`);
