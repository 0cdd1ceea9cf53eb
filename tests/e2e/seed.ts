// Run by global-setup with tsx: creates the e2e users in the fresh DATA_DIR.
import { hashPassword } from "~/lib/crypto.server";
import { createBoard } from "~/models/boards.server";
import { addMember, createProject } from "~/models/projects.server";
import { createUser } from "~/models/users.server";
import { openDatabase } from "~/services/boot.server";
import { setDailyMedia } from "~/models/daily-media.server";
import { insertImage, insertImageRows } from "~/models/images.server";
import { storeImageFile } from "~/services/image-files.server";
import { drawDemoImage } from "~/services/demo.server";
import { emailFor, OWN_PROJECT, uploadProject, OUTSIDERS, TERMS_PENDING, PASSWORD, PROJECTS, SCENARIOS, TOTP_SECRET, type Scenario } from "./users";

const connection = await openDatabase();
const hash = await hashPassword(PASSWORD);
const project = await createProject({ name: "E2E Project" });
await setDailyMedia([{ kind: "image", url: "/daily/daily-1.jpg" }]);
for (const p of PROJECTS)
  for (const [scenario, { totp }] of Object.entries(SCENARIOS)) {
    const user = await createUser({
      email: emailFor(scenario as Scenario, p),
      name: "E2E",
      surname: scenario,
      status: "active",
      password_hash: hash,
      totp_secret: totp ? TOTP_SECRET : null,
      terms_acknowledged_at: TERMS_PENDING.includes(scenario as Scenario) ? null : Date.now(),
    });
    if (OUTSIDERS.includes(scenario as Scenario)) continue;
    if (OWN_PROJECT.includes(scenario as Scenario)) {
      const own = await createProject({ name: uploadProject(scenario as Scenario, p) });
      await addMember(own.id, user.id, "editor");
      const actor = { id: user.id, role: "user" as const };
      await insertImage(actor, own.id, await storeImageFile(await drawDemoImage(3, 400, 300)), {
        title: "Seeded image",
        description: "Seeded for the edit tests",
        keywords: ["seeded", "shelf"],
        ocrText: "SALE",
        originalName: "seeded.jpg",
      });
      continue;
    }
    await addMember(project.id, user.id, "editor");
    if (scenario === "link" && p === "js") {
      const actor = { id: user.id, role: "user" as const };
      const file = await storeImageFile(await drawDemoImage(1, 640, 480));
      const imageId = await insertImage(actor, project.id, file, { title: "E2E image", description: "", keywords: ["e2e"], ocrText: "", originalName: "e2e.jpg" });
      await createBoard(actor, { projectId: project.id, title: "E2E Board", imageIds: [imageId] });
    }
  }

// Browsing fixtures: 130 images (three grid pages), 20 boards, and a project nobody in the e2e run belongs to.
const owner = { id: 0, role: "admin" as const };
const file = await storeImageFile(await drawDemoImage(2, 320, 240));
await insertImageRows(
  owner,
  project.id,
  Array.from({ length: 130 }, (_, i) => ({
    file,
    meta: { title: `Grid image ${String(i + 1).padStart(3, "0")}`, description: "", keywords: ["grid", `k${i % 7}`], ocrText: "", originalName: `g${i}.jpg` },
    at: Date.UTC(2025, 0, 1) + i * 1000,
  })),
);
for (let i = 1; i <= 20; i++) await createBoard(owner, { projectId: project.id, title: `Board ${String(i).padStart(2, "0")}` });
const other = await createProject({ name: "Other Project" });
await createBoard(owner, { projectId: other.id, title: "Secret board" });

await connection.close();
