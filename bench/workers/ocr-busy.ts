// P14b: OCR work for the app server's runner, in a copy of the 100k dataset (DATABASE_URL). `prepare <count>`: the
// project's newest <count> images take their OCR text for the machine's (so a reading may replace it). `queue <n>`:
// readings of <n> of them queued. `stop`: the readings not yet taken dropped. `count`: nothing. Each prints
// { readings, running }: the readings done so far, and those running.
import { db } from "~/db/connection.server";
import { OCR_JOB } from "~/lib/job-types";
import { queueOcr } from "~/models/image-ocr.server";
import { write } from "~/models/write.server";
import { openDatabase } from "~/services/boot.server";

const [mode, n = "0"] = process.argv.slice(2);
const projectId = Number(process.env.BENCH_PROJECT_ID);
const connection = await openDatabase();
const machineRead = () =>
  db()
    .selectFrom("images")
    .select("id")
    .where("project_id", "=", projectId)
    .where("ocr_by_machine", "=", 1)
    .orderBy("id", "desc")
    .limit(Number(n))
    .execute();

if (mode === "prepare") {
  const newest = await db()
    .selectFrom("images")
    .select("id")
    .where("project_id", "=", projectId)
    .orderBy("id", "desc")
    .limit(Number(n))
    .execute();
  await db()
    .updateTable("images")
    .set({ ocr_by_machine: 1 })
    .where(
      "id",
      "in",
      newest.map((r) => r.id),
    )
    .execute();
} else if (mode === "queue") {
  const ids = (await machineRead()).map((r) => r.id);
  await write(async (trx) => {
    for (const id of ids) await queueOcr(trx, id);
  });
} else if (mode === "stop") {
  await db().deleteFrom("jobs").where("type", "=", OCR_JOB).where("status", "=", "queued").execute();
}
const done = await db()
  .selectFrom("jobs")
  .select((eb) => eb.fn.countAll<number>().as("n"))
  .where("type", "=", OCR_JOB)
  .where("status", "=", "done")
  .executeTakeFirstOrThrow();
const running = await db()
  .selectFrom("jobs")
  .select((eb) => eb.fn.countAll<number>().as("n"))
  .where("type", "=", OCR_JOB)
  .where("status", "=", "running")
  .executeTakeFirstOrThrow();
await connection.close();
process.stdout.write(JSON.stringify({ readings: Number(done.n), running: Number(running.n) }) + "\n");
