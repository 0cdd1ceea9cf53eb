// Run by global-setup with tsx, once per target: creates the e2e users and fixtures in the fresh database of
// DATABASE_URL (SQLite or a PostgreSQL schema), for the browser projects of that target (E2E_TARGET).
import { conn, connect, setConnection } from "~/db/connection.server";
import { migrateToLatest } from "~/db/migrations.server";
import { hashPassword } from "~/lib/crypto.server";
import { createBoard } from "~/models/boards.server";
import { projectScope } from "~/models/scope.server";
import { SYSTEM } from "~/models/actor";
import { addMember, createProject } from "~/models/projects.server";
import { createUser } from "~/models/users.server";
import { openDatabase } from "~/services/boot.server";
import { setDailyMedia } from "~/models/daily-media.server";
import { insertImage, insertImageRows } from "~/models/images.server";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { storeImageFile } from "~/services/image-files.server";
import { drawDemoImage } from "~/services/demo.server";
import {
  BOARD_PROJECT,
  boardsProject,
  emailFor,
  OUTSIDERS,
  OWN_PROJECT,
  OWN_PROJECT_MANAGERS,
  PASSWORD,
  SCENARIOS,
  TERMS_PENDING,
  TOTP_SECRET,
  longListProject,
  secondProject,
  uploadProject,
  WORKSHOP_ATTRIBUTES,
  SMART_KEYWORDS,
  LOOK_KEYWORDS,
  VIEWERS,
  ADMINS,
  WORKSHOP_MANAGERS,
  type Scenario,
} from "./users";
import { retryOnVanishedSchema } from "../helpers/pg-race";
import { targetFor, type TargetName } from "./targets";
import { addGroupRole } from "~/models/sso.server";
import { SSO_ID, SSO_PROJECT } from "./sso";

const target = targetFor((process.env.E2E_TARGET ?? "sqlite") as TargetName);
const PROJECTS = target.browserProjects;

// PostgreSQL: migrate naming the schema. Without it, Kysely's migrator looks for its own tables in every schema
// of the database, and when another schema (another test run's) has them it skips creating ours. Once they
// exist here, the unnamed migration of openDatabase() (and of the server's boot) finds them through search_path.
// Both are retried if another run's schema vanishes under the migrator's introspection (tests/helpers/pg-race.ts).
if (target.schema)
  await retryOnVanishedSchema(async () => {
    const pre = connect(target.database);
    try {
      await migrateToLatest(pre.db, "postgres", target.schema);
    } finally {
      await pre.close();
    }
  });
const connection = await retryOnVanishedSchema(async () => {
  try {
    return await openDatabase();
  } catch (error) {
    await conn()
      .close()
      .catch(() => {});
    setConnection(undefined);
    throw error;
  }
});
const hash = await hashPassword(PASSWORD);
const WORKSHOP_META = { title: "", description: "", keywords: [], ocrText: "", originalName: "workshop.jpg" };
// Six distinct small pictures for the board workshops (stored once, shared by every workshop project).
const workshopFiles = await Promise.all([11, 12, 13, 14, 15, 16].map(async (n) => storeImageFile(await drawDemoImage(n, 360, 270))));
const project = await createProject({ name: "E2E Project" });
await setDailyMedia([{ kind: "image", url: "/daily/daily-1.jpg" }]);
for (const p of PROJECTS)
  for (const [scenario, { totp }] of Object.entries(SCENARIOS)) {
    const user = await createUser({
      email: emailFor(scenario as Scenario, p),
      name: "E2E",
      surname: scenario,
      status: "active",
      role: ADMINS.includes(scenario as Scenario) ? "admin" : "user",
      password_hash: hash,
      totp_secret: totp ? TOTP_SECRET : null,
      terms_acknowledged_at: TERMS_PENDING.includes(scenario as Scenario) ? null : Date.now(),
    });
    if (OUTSIDERS.includes(scenario as Scenario)) continue;
    if (OWN_PROJECT.includes(scenario as Scenario)) {
      const own = await createProject({ name: uploadProject(scenario as Scenario, p) });
      await addMember(own.id, user.id, OWN_PROJECT_MANAGERS.includes(scenario as Scenario) ? "manager" : "editor");
      const actor = { id: user.id, role: "user" as const };
      await insertImage(await projectScope(actor, own.id), await storeImageFile(await drawDemoImage(3, 400, 300)), {
        title: "Seeded image",
        description: "Seeded for the edit tests",
        keywords: ["seeded", "shelf"],
        ocrText: "SALE",
        originalName: "seeded.jpg",
      });
      continue;
    }
    if (BOARD_PROJECT.includes(scenario as Scenario)) {
      const own = await createProject({ name: boardsProject(scenario as Scenario, p) });
      await addMember(own.id, user.id, WORKSHOP_MANAGERS.includes(scenario as Scenario) ? "manager" : "editor");
      const scope = await projectScope({ id: user.id, role: "user" }, own.id);
      const ids: number[] = [];
      for (let i = 1; i <= 6; i++)
        ids.push(
          await insertImage(scope, workshopFiles[i - 1]!, {
            title: `Workshop ${i}`,
            description: `Image ${i} of the board workshop`,
            keywords: [
              i % 2 ? "shelf" : "aisle",
              ...(scenario === "searchSmart" ? SMART_KEYWORDS[i - 1]! : scenario === "look" ? LOOK_KEYWORDS[i - 1]! : []),
            ],
            ocrText: "",
            originalName: `workshop-${i}.jpg`,
          }),
        );
      await createBoard(scope, { title: "Alpha", imageIds: ids.slice(0, 3) });
      await createBoard(scope, { title: "Beta" });
      await createBoard(scope, { title: "Client review", imageIds: ids.slice(0, 2), clientBoard: true });
      if (scenario === "pin") {
        // A project whose only board is client-level: nothing to pin to ('No Boards').
        const empty = await createProject({ name: `No boards ${p}` });
        await addMember(empty.id, user.id, "editor");
        const emptyScope = await projectScope({ id: user.id, role: "user" }, empty.id);
        const lone = await insertImage(emptyScope, workshopFiles[0]!, { ...WORKSHOP_META, title: "Lonely image" });
        await createBoard(emptyScope, { title: "Shared only", imageIds: [lone], clientBoard: true });
      }
      if (scenario === "searchFilters" || scenario === "searchFresh" || scenario === "look") {
        const values = [];
        for (const [name, perImage] of Object.entries(WORKSHOP_ATTRIBUTES)) {
          const attributeId = await createAttribute(scope, { name, code: name.slice(0, 3).toUpperCase(), type: 3 });
          for (const [i, value] of perImage.entries()) if (value) values.push({ imageId: ids[i]!, attributeId, value });
        }
        await setAttributeValues(scope, values);
      }
      if (scenario === "look") {
        // 33 active with Channel and Region, and two inactive: Manage Attributes' 35 rows.
        const system = await projectScope(SYSTEM, own.id);
        for (let i = 3; i <= 33; i++) await createAttribute(system, { name: `Attr${String(i).padStart(2, "0")}`, type: 3 });
        for (const name of ["Spare_1", "Spare_2"]) await createAttribute(system, { name, type: 3, active: false });
      }
      if (scenario === "attrManage") {
        // 33 active (32 user attributes and a WSC one) and one inactive: ticking it passes the limit.
        const system = await projectScope(SYSTEM, own.id);
        for (let i = 1; i <= 32; i++) await createAttribute(system, { name: `Attr${String(i).padStart(2, "0")}`, type: 3 });
        await createAttribute(system, { name: "Source", code: "src", type: 1 });
        await createAttribute(system, { name: "Spare", type: 3, active: false });
      }
      if (
        scenario === "attrAssign" ||
        scenario === "attrBulk" ||
        scenario === "attrExport" ||
        scenario === "attrImport" ||
        scenario === "attrImport2"
      ) {
        const system = await projectScope(SYSTEM, own.id);
        const region = await createAttribute(system, { name: "Region", code: "region", type: 3 });
        await createAttribute(system, { name: "Source", code: "src", type: 1 });
        await setAttributeValues(system, [{ imageId: ids[0]!, attributeId: region, value: "North" }]);
      }
      if (scenario === "searchFilters" || scenario === "look") {
        const long = await createProject({ name: longListProject(p, scenario) });
        await addMember(long.id, user.id, "manager");
        const longScope = await projectScope({ id: user.id, role: "user" }, long.id);
        const store = await createAttribute(longScope, { name: "Store", code: "STO", type: 3 });
        const stores = [];
        for (let i = 1; i <= 32; i++) {
          const image = await insertImage(longScope, workshopFiles[i % 6]!, { ...WORKSHOP_META, title: `Store photo ${i}` });
          stores.push({ imageId: image, attributeId: store, value: `Store ${String(i).padStart(2, "0")}` });
        }
        await setAttributeValues(longScope, stores);
      }
      if (scenario === "searchAll") {
        const second = await createProject({ name: secondProject(p) });
        await addMember(second.id, user.id, "editor");
        await insertImage(await projectScope({ id: user.id, role: "user" }, second.id), workshopFiles[5]!, {
          ...WORKSHOP_META,
          title: "Second aisle",
          keywords: ["aisle"],
        });
      }
      continue;
    }
    await addMember(project.id, user.id, VIEWERS.includes(scenario as Scenario) ? "viewer" : "editor");
    if (scenario === "link" && p === PROJECTS[0]) {
      const actor = { id: user.id, role: "user" as const };
      const file = await storeImageFile(await drawDemoImage(1, 640, 480));
      const scope = await projectScope(actor, project.id);
      const imageId = await insertImage(scope, file, {
        title: "E2E image",
        description: "",
        keywords: ["e2e"],
        ocrText: "",
        originalName: "e2e.jpg",
      });
      await createBoard(scope, { title: "E2E Board", imageIds: [imageId] });
    }
  }

// Browsing fixtures: 130 images (three grid pages), 20 boards, and a project nobody in the e2e run belongs to.
const owner = { id: 0, role: "admin" as const };
const file = await storeImageFile(await drawDemoImage(2, 320, 240));
const ownerScope = await projectScope(owner, project.id);
await insertImageRows(
  ownerScope,
  Array.from({ length: 130 }, (_, i) => ({
    file,
    meta: {
      title: `Grid image ${String(i + 1).padStart(3, "0")}`,
      description: "",
      keywords: ["grid", `k${i % 7}`],
      ocrText: "",
      originalName: `g${i}.jpg`,
    },
    at: Date.UTC(2025, 0, 1) + i * 1000,
  })),
);
for (let i = 1; i <= 20; i++) await createBoard(ownerScope, { title: `Board ${String(i).padStart(2, "0")}` });
const other = await createProject({ name: "Other Project" });
await createBoard(await projectScope(owner, other.id), { title: "Secret board" });

// Company sign-in (sso.spec.ts): the provider's editors and viewers, in a project of their own.
const ssoProject = await createProject({ name: SSO_PROJECT });
await addGroupRole(SYSTEM, { provider: SSO_ID, group: "sso-editors", projectId: ssoProject.id, role: "editor" });
await addGroupRole(SYSTEM, { provider: SSO_ID, group: "sso-viewers", projectId: ssoProject.id, role: "viewer" });

await connection.close();
