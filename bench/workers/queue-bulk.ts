/**
 * P11's job: queues a bulk "add keyword" over a whole project (Select all) the way the bulk page does — runBulk, which
 * counts the selection and, past BULK_INLINE_MAX, queues the bulk job — and prints { jobId, count }. The running
 * instances' job runners take it from there.
 *
 * Input: argv[2] JSON { projectId, email, keyword } and the app's environment for the database the instances use.
 */
import { loadConfig, setConfig } from "~/config.server";
import type { Actor } from "~/models/actor";
import { projectScope } from "~/models/scope.server";
import { findUserByEmail } from "~/models/users.server";
import { openDatabase } from "~/services/boot.server";
import { runBulk } from "~/services/bulk.server";

const args = JSON.parse(process.argv[2] ?? "{}") as { projectId: number; email: string; keyword: string };

setConfig(loadConfig(process.env));
const connection = await openDatabase();
try {
  const user = await findUserByEmail(args.email);
  if (!user) throw new Error(`No bench user ${args.email}`);
  const actor: Actor = { id: user.id, role: user.role };
  const queued = await runBulk(
    await projectScope(actor, args.projectId),
    { all: true, ids: [] },
    { op: "keywords", keywords: [args.keyword] },
  );
  if (!("jobId" in queued)) throw new Error(`runBulk ran ${queued.count} images inline; expected a job`);
  process.stdout.write(`${JSON.stringify({ jobId: queued.jobId, count: queued.count })}\n`);
} finally {
  await connection.close();
}
