import { describe, expect, it } from "vitest";
import { cameraName, dayStart, takenIso, takenText } from "~/lib/capture";
import { filterSearch, gridFilterOf, takenRangeProblems } from "~/lib/grid-filter";
import { cleanText, exifTime } from "~/services/capture.server";

describe("capture data", () => {
  it("reads a camera's date as its wall clock, and anything impossible as unknown (0)", () => {
    expect(exifTime("2024:05:17 14:03:09")).toBe(Date.UTC(2024, 4, 17, 14, 3, 9) / 1000);
    expect(exifTime("2024-05-17T14:03:09+02:00")).toBe(Date.UTC(2024, 4, 17, 14, 3, 9) / 1000);
    for (const bad of [
      "2024:02:30 10:00:00",
      "2024:13:01 10:00:00",
      "2024:01:01 24:00:00",
      "0000:00:00 00:00:00",
      "1969:12:31 23:59:59",
      "    :  :     :  :  ",
      "",
      20240517,
      null,
    ])
      expect(exifTime(bad), String(bad)).toBe(0);
  });

  it("keeps printable text only, trimmed, at most 100 characters", () => {
    expect(cleanText("  Canon\u0000 ")).toBe("Canon");
    expect(cleanText("a".repeat(150))).toHaveLength(100);
    expect(cleanText(42)).toBe("");
  });

  it("names a camera once when its model names its maker", () => {
    expect(cameraName("Canon", "Canon EOS R6")).toBe("Canon EOS R6");
    expect(cameraName("NIKON CORPORATION", "NIKON D850")).toBe("NIKON D850");
    expect(cameraName("FUJIFILM", "X-T5")).toBe("FUJIFILM X-T5");
    expect(cameraName("Apple", "")).toBe("Apple");
    expect(cameraName("", "")).toBe("");
  });

  it("shows a capture time without converting any zone", () => {
    const t = Date.UTC(2024, 4, 17, 9, 3, 9) / 1000;
    expect(takenIso(t)).toBe("2024-05-17T09:03:09");
    expect(takenIso(0)).toBeNull();
    expect(takenText(t)).toBe("17 May 2024, 09:03");
  });

  it("takes a day as its first second, or the next day's for the end of a range; anything else is no day", () => {
    expect(dayStart("2024-02-29")).toBe(Date.UTC(2024, 1, 29) / 1000);
    expect(dayStart("2024-12-31", true)).toBe(Date.UTC(2025, 0, 1) / 1000);
    for (const bad of ["2023-02-29", "2024-1-01", "1969-12-31", "yesterday", ""]) expect(dayStart(bad), bad).toBeNull();
  });

  it("carries the order and the range of days in the grid's address, and drops what is not one", () => {
    const filter = gridFilterOf(new URLSearchParams("q=tea&sort=taken&takenFrom=2024-01-01&takenTo=2024-02-30"));
    expect(filter).toEqual({ q: "tea", sort: "taken", takenFrom: "2024-01-01" });
    expect(filterSearch(filter)).toBe("q=tea&sort=taken&takenFrom=2024-01-01");
    expect(gridFilterOf(new URLSearchParams("sort=oldest&takenTo=+2024-03-01+"))).toEqual({ takenTo: "2024-03-01" });
  });

  it("says which typed day was left out and why, and a range that ends before it starts; nothing for a good range", () => {
    const problems = (query: string) => takenRangeProblems(new URLSearchParams(query));
    expect(problems("takenFrom=2024-01-01&takenTo=2024-01-01")).toEqual({});
    expect(problems("takenFrom=&takenTo=")).toEqual({});
    expect(problems("takenFrom=31%2F12%2F2024")).toEqual({
      takenFrom: '"31/12/2024" is not a date: enter it as YYYY-MM-DD, for example 2024-05-31. This date was left out.',
    });
    expect(problems("takenTo=2024-02-30").takenTo).toBe(
      "There is no day 2024-02-30: enter a real day, from 1970-01-01 on. This date was left out.",
    );
    expect(problems("takenFrom=1969-12-31").takenFrom).toMatch(/^There is no day 1969-12-31/);
    expect(problems(`takenFrom=${"x".repeat(500)}`).takenFrom).toContain(`"${"x".repeat(40)}" is not a date`);
    expect(problems("takenFrom=2024-05-02&takenTo=2024-05-01")).toEqual({
      takenTo: 'The range ends before it starts: "Taken to" (2024-05-01) is before "Taken from" (2024-05-02), so no image is in it.',
    });
  });
});
