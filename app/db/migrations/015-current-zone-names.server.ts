import type { Kysely, Migration } from "kysely";
import { LEGACY_ZONE_NAMES, timezones } from "../reference-data";

/**
 * The time-zone list by IANA's current names (issue 24: it offered "Asia/Calcutta" and no "Asia/Kolkata"). Migration
 * 002 stored the names the runtime listed, some of them legacy (see LEGACY_ZONE_NAMES). A legacy row is renamed in
 * place, so every profile that points at it keeps its zone and shows the current name; where both rows exist, the
 * profiles move to the current one and the legacy row goes. Applications, which keep the zone's name as text, are
 * renamed too. Zones the runtime knows and the list lacks are added.
 */
export function currentZoneNames(): Migration {
  return {
    async up(db: Kysely<any>) {
      const rows: { id: number; name: string }[] = await db.selectFrom("timezones").select(["id", "name"]).execute();
      const byName = new Map(rows.map((r) => [r.name, r.id]));
      for (const [legacy, current] of Object.entries(LEGACY_ZONE_NAMES)) {
        const old = byName.get(legacy);
        if (old !== undefined) {
          const kept = byName.get(current);
          if (kept === undefined) await db.updateTable("timezones").set({ name: current }).where("id", "=", old).execute();
          else {
            await db.updateTable("users").set({ timezone_id: kept }).where("timezone_id", "=", old).execute();
            await db.deleteFrom("timezones").where("id", "=", old).execute();
          }
          byName.delete(legacy);
          byName.set(current, kept ?? old);
        }
        await db.updateTable("registrations").set({ timezone: current }).where("timezone", "=", legacy).execute();
      }
      const missing = timezones().filter((t) => !byName.has(t.name));
      for (let i = 0; i < missing.length; i += 100)
        await db
          .insertInto("timezones")
          .values(missing.slice(i, i + 100))
          .execute();
    },
  };
}
