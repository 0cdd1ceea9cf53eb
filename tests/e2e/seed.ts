// Run by global-setup with tsx: creates the e2e users in the fresh DATA_DIR.
import { hashPassword } from "~/lib/crypto.server";
import { createBoard } from "~/models/boards.server";
import { addMember, createProject } from "~/models/projects.server";
import { createUser } from "~/models/users.server";
import { openDatabase } from "~/services/boot.server";
import { setDailyMedia } from "~/models/daily-media.server";
import { insertImage } from "~/models/images.server";
import { storeImageFile } from "~/services/image-files.server";
import { drawDemoImage } from "~/services/demo.server";
import { emailFor, OUTSIDERS, TERMS_PENDING, PASSWORD, PROJECTS, SCENARIOS, TOTP_SECRET, type Scenario } from "./users";

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
    await addMember(project.id, user.id, "editor");
    if (scenario === "link" && p === "js") {
      const actor = { id: user.id, role: "user" as const };
      const file = await storeImageFile(await drawDemoImage(1, 640, 480));
      const imageId = await insertImage(actor, project.id, file, { title: "E2E image", description: "", keywords: ["e2e"], ocrText: "", originalName: "e2e.jpg" });
      await createBoard(actor, { projectId: project.id, title: "E2E Board", imageIds: [imageId] });
    }
  }
await connection.close();
