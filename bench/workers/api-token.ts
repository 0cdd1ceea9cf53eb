/**
 * P13's credential: a read-only personal access token of the dataset's bench user over all its projects, made
 * through the app's own model (a secret is shown only once, so every run makes its own and revokes the earlier
 * ones). Prints `{ "token": "koala_pat_…" }`.
 */
import { loadConfig, setConfig } from "~/config.server";
import { db } from "~/db/connection.server";
import { createToken, revokeToken } from "~/models/api-tokens.server";
import { openDatabase } from "~/services/boot.server";

const NAME = "P13 bench";
setConfig(loadConfig(process.env));
const connection = await openDatabase();
const user = await db().selectFrom("users").select(["id", "role"]).where("email", "=", process.env.BENCH_EMAIL!).executeTakeFirstOrThrow();
const actor = { id: user.id, role: user.role };
const earlier = await db()
  .selectFrom("api_tokens")
  .select("id")
  .where("user_id", "=", user.id)
  .where("name", "=", NAME)
  .where("revoked_at", "is", null)
  .execute();
for (const t of earlier) await revokeToken(actor, Number(t.id));
const { secret } = await createToken(actor, { name: NAME, write: false, projects: null, days: 7 });
await connection.close();
console.log(JSON.stringify({ token: secret }));
