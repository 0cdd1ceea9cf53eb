// Run by global-setup with tsx: creates the e2e users in the fresh DATA_DIR.
import { hashPassword } from "~/lib/crypto.server";
import { createBoard } from "~/models/boards.server";
import { addMember, createProject } from "~/models/projects.server";
import { createUser } from "~/models/users.server";
import { openDatabase } from "~/services/boot.server";
import { setDailyMedia } from "~/models/daily-media.server";
import { emailFor, PASSWORD, PROJECTS, SCENARIOS, TOTP_SECRET, type Scenario } from "./users";

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
    });
    await addMember(project.id, user.id, "editor");
    if (scenario === "link" && p === "js") await createBoard({ id: user.id, role: "user" }, { projectId: project.id, title: "E2E Board" });
  }
await connection.close();
