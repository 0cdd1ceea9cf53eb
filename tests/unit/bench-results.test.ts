import { describe, expect, it } from "vitest";
import { markdown, roundsOf, roundsPast, type RunRecord } from "../../bench/lib/results";
import type { Check } from "../../bench/lib/types";

const ratio = (value: number, goal = "≤ 1.5"): Check => ({ name: "ratio", value, unit: "×", goal, pass: true });

function run(checks: Check[], perRound: Record<string, number[]>, status: "pass" | "miss" = "pass"): RunRecord {
  return {
    timestamp: "2026-12-03T00:00:00.000Z",
    durationSeconds: 1,
    selection: ["P5"],
    machine: { cpus: { count: 2, model: "test" }, node: "v22", git: { commit: "0123456789abcdef", dirty: [] }, pinning: "none" },
    datasets: {},
    metrics: [
      {
        id: "P5",
        title: "Search loader",
        goal: "≤ 1.5×",
        status,
        seconds: 1,
        figure: checks[0]!.value as number,
        unit: "×",
        checks,
        perRound,
      },
    ],
  };
}
const row = (r: RunRecord) =>
  markdown(r)
    .split("\n")
    .find((l) => l.startsWith("| P5 |"))!;

describe("bench results: each figure with the spread of its rounds", () => {
  it("finds the rounds a check's median was taken from, and none for a figure that is no median", () => {
    const perRound = { appRps: [1, 2, 3], ratio: [1.1, 1.2, 1.6] };
    expect(roundsOf({ perRound }, ratio(1.2))).toEqual([1.1, 1.2, 1.6]);
    expect(roundsOf({ perRound }, ratio(1.3))).toBeNull();
    expect(roundsOf({ perRound }, { name: "reachable", value: true, goal: "yes", pass: true })).toBeNull();
  });

  it("counts the rounds past an upper or a lower bound", () => {
    expect(roundsPast(ratio(1.2), [1.1, 1.2, 1.6, 1.7])).toBe(2);
    expect(roundsPast(ratio(0.9, "≥ 0.9"), [0.85, 0.95, 1])).toBe(1);
    expect(roundsPast({ name: "p99", value: 900, goal: "≤ 1,000", pass: true }, [900, 1200])).toBe(1);
    expect(roundsPast({ name: "reachable", value: 1, goal: "yes", pass: true }, [1, 2])).toBeNull();
  });

  it("prints the spread beside the median, and a pass whose rounds did not all meet the goal says so", () => {
    const line = row(run([ratio(1.2)], { ratio: [1.1, 1.2, 1.6] }));
    expect(line).toContain("ratio 1.2× (1.1×–1.6× over 3 rounds)");
    expect(line).toContain("pass (ratio past the goal in 1 of 3 rounds)");
  });

  it("prints a plain pass when every round met the goal, and a miss as a miss", () => {
    expect(row(run([ratio(1.2)], { ratio: [1.1, 1.2, 1.3] }))).toMatch(/ \| pass \| /);
    expect(row(run([ratio(1.7)], { ratio: [1.6, 1.7, 1.8] }, "miss"))).toContain("| **miss** |");
  });
});
