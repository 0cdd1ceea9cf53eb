// P6: a fresh, empty library for one ingest round: a user, a project, and a signed-in session cookie
// (made directly, as authentication is not what P6 measures). Prints { projectId, cookie } as JSON.
// Needs DATA_DIR and SESSION_SECRET in the environment, the same the server gets.
import { openDatabase } from "~/services/boot.server";
import { addMember, createProject } from "~/models/projects.server";
import { createUser } from "~/models/users.server";
import { signIn } from "~/sessions.server";

const connection = await openDatabase();
const user = await createUser({
  email: "ingest@koala.example",
  name: "Ingest",
  surname: "Bench",
  status: "active",
  terms_acknowledged_at: Date.now(),
});
const project = await createProject({ name: "Ingest" });
await addMember(project.id, user.id, "editor");
const response = await signIn(new Request("http://127.0.0.1/login"), { ip: "127.0.0.1", userAgent: "bench" }, user.id, "/", "bench");
const cookie = response.headers.get("Set-Cookie")!.split(";")[0];
await connection.close();
process.stdout.write(JSON.stringify({ projectId: project.id, cookie }) + "\n");
