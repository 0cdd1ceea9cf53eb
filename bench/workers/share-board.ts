/**
 * P3's subject: a board of the dataset's 100 newest images ("P3 shared board", made once and kept in the cached
 * dataset) and a fresh share link to it (a token is shown only once, so every run makes its own and revokes the
 * earlier ones). Runs through the app's own models; prints `{ "path": "/shared-board/<board>:<token>" }`.
 */
import { loadConfig, setConfig } from "~/config.server";
import { db } from "~/db/connection.server";
import { createBoard } from "~/models/boards.server";
import { boardScope, projectScope } from "~/models/scope.server";
import { createShareLinks, revokeShareLink } from "~/models/share-links.server";
import { openDatabase } from "~/services/boot.server";

const TITLE = "P3 shared board";
const CARDS = 100;
const projectId = Number(process.env.BENCH_PROJECT_ID);
if (!projectId) throw new Error("BENCH_PROJECT_ID is not set; run through npm run bench");

setConfig(loadConfig(process.env));
const connection = await openDatabase();
const user = await db().selectFrom("users").select(["id", "role"]).where("email", "=", process.env.BENCH_EMAIL!).executeTakeFirstOrThrow();
const actor = { id: user.id, role: user.role };
const existing = await db()
  .selectFrom("boards")
  .select("id")
  .where("project_id", "=", projectId)
  .where("title", "=", TITLE)
  .executeTakeFirst();
let boardId = existing?.id;
if (!boardId) {
  const newest = await db()
    .selectFrom("images")
    .select("id")
    .where("project_id", "=", projectId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(CARDS)
    .execute();
  boardId = (await createBoard(await projectScope(actor, projectId), { title: TITLE, imageIds: newest.map((r) => r.id) })).id;
}
const board = await boardScope(actor, boardId);
const earlier = await db().selectFrom("share_links").select("id").where("board_id", "=", boardId).where("revoked_at", "is", null).execute();
for (const link of earlier) await revokeShareLink(board, link.id);
const [link] = await createShareLinks(board, [null], { expiry: "never", allowDownload: true, showMetadata: true }, "bench P3");
await connection.close();
process.stdout.write(`${JSON.stringify({ path: link!.path, boardId })}\n`);
