import { describe, expect, it } from "vitest";
import { currentZoneName, LEGACY_ZONE_NAMES, timezones } from "~/db/reference-data";

const offsetOf = (zone: string, at: Date) =>
  new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" }).formatToParts(at).find((p) => p.type === "timeZoneName")
    ?.value;

describe("the time-zone list", () => {
  const names = timezones().map((t) => t.name);
  it("holds every zone the runtime knows, by its current IANA name, once", () => {
    expect(names).toEqual(expect.arrayContaining(["Asia/Kolkata", "Asia/Kathmandu", "Europe/Kyiv", "Asia/Ho_Chi_Minh"]));
    expect(names.filter((n) => n in LEGACY_ZONE_NAMES)).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBe(new Set(Intl.supportedValuesOf("timeZone").map(currentZoneName)).size);
    expect(timezones().find((t) => t.name === "Asia/Kathmandu")?.offset_hours).toBe(5.75);
    expect(timezones().find((t) => t.name === "Asia/Kolkata")?.offset_hours).toBe(5.5);
  });
  it.each(Object.entries(LEGACY_ZONE_NAMES))("maps %s to %s, a name the runtime takes for the same zone", (legacy, current) => {
    expect(currentZoneName(legacy)).toBe(current);
    expect(currentZoneName(current)).toBe(current);
    for (const at of [new Date(Date.UTC(2026, 0, 15)), new Date(Date.UTC(2026, 6, 15))])
      expect(offsetOf(current, at)).toBe(offsetOf(legacy, at));
  });
});
