import { db } from "~/db/connection.server";

export const DAILY_TIMEZONE = "Africa/Johannesburg";

/** Days since the epoch, counted in the spec's base timezone (the day turns at midnight in Johannesburg). */
export function dayNumber(at: Date, timeZone = DAILY_TIMEZONE): number {
  const ymd = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(at);
  return Math.floor(Date.parse(`${ymd}T00:00:00Z`) / 86_400_000);
}

/** The login background of the day: one configured image (and video, when any) picked by the day number. */
export async function dailyMedia(at = new Date()): Promise<{ imageUrl: string | null; videoUrl: string | null }> {
  const rows = await db().selectFrom("daily_media").select(["kind", "url"]).orderBy("position").orderBy("id").execute();
  const day = dayNumber(at);
  const pick = (kind: "image" | "video") => {
    const list = rows.filter((r) => r.kind === kind);
    return list.length ? list[day % list.length]!.url : null;
  };
  return { imageUrl: pick("image"), videoUrl: pick("video") };
}

export async function setDailyMedia(items: { kind: "image" | "video"; url: string }[]) {
  await db()
    .transaction()
    .execute(async (trx) => {
      await trx.deleteFrom("daily_media").execute();
      if (items.length)
        await trx
          .insertInto("daily_media")
          .values(items.map((it, position) => ({ ...it, position })))
          .execute();
    });
}
