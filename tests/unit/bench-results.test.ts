import { describe, expect, it } from "vitest";
import { markdown, roundsMissed, roundsOf, type RunRecord } from "../../bench/lib/results";
import type { Check } from "../../bench/lib/types";

/** A ratio check naming its series of rounds ("ratio" unless told; null: none, as in records before 2026-12-03). */
const ratio = (value: number, goal = "≤ 1.5", rounds: string | null = "ratio"): Check => ({
  name: "ratio",
  value,
  unit: "×",
  goal,
  pass: true,
  rounds: rounds ?? undefined,
});

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

describe("bench results: each figure with the range of its rounds", () => {
  it("takes the series a check names, even where another series has the same median", () => {
    const perRound = { baselineP99: [5, 7, 9], ratio: [6, 7, 8] };
    const check = ratio(7);
    expect(roundsOf({ perRound, checks: [check] }, check)).toEqual([6, 7, 8]);
  });

  it("gives no rounds for a check that names none, a named series that is missing or single, or a yes or no", () => {
    const perRound = { ratio: [1.1, 1.2, 1.6], one: [1.2] };
    const named = ratio(1.2);
    const unnamed = { ...ratio(1.2), name: "errors", rounds: undefined };
    expect(roundsOf({ perRound, checks: [named, unnamed] }, unnamed)).toBeNull();
    expect(roundsOf({ perRound, checks: [ratio(1.2, "≤ 1.5", "missing")] }, ratio(1.2, "≤ 1.5", "missing"))).toBeNull();
    expect(roundsOf({ perRound, checks: [ratio(1.2, "≤ 1.5", "one")] }, ratio(1.2, "≤ 1.5", "one"))).toBeNull();
    const yesNo: Check = { name: "reachable", value: true, goal: "yes", pass: true, rounds: "ratio" };
    expect(roundsOf({ perRound, checks: [yesNo] }, yesNo)).toBeNull();
  });

  it("matches a record written before checks named their series by the median's value", () => {
    const perRound = { appRps: [1, 2, 3], ratio: [1.1, 1.2, 1.6] };
    const legacy = ratio(1.2, "≤ 1.5", null);
    expect(roundsOf({ perRound, checks: [legacy] }, legacy)).toEqual([1.1, 1.2, 1.6]);
    expect(roundsOf({ perRound, checks: [legacy] }, ratio(1.3, "≤ 1.5", null))).toBeNull();
  });

  it("counts the rounds that miss an upper or a lower bound, a round that is no number among them", () => {
    expect(roundsMissed(ratio(1.2), [1.1, 1.2, 1.5, 1.6, 1.7])).toBe(2);
    expect(roundsMissed(ratio(0.9, "≥ 0.9"), [0.85, 0.9, 1])).toBe(1);
    expect(roundsMissed({ name: "p99", value: 900, goal: "≤ 1,000", pass: true }, [900, 1200])).toBe(1);
    expect(roundsMissed(ratio(1.2), [1.1, Number.NaN])).toBe(1);
    expect(roundsMissed({ name: "reachable", value: 1, goal: "yes", pass: true }, [1, 2])).toBeNull();
  });

  it("prints the range beside the median, and a pass whose rounds did not all meet the goal says how many missed", () => {
    const line = row(run([ratio(1.2)], { ratio: [1.1, 1.2, 1.6] }));
    expect(line).toContain("ratio 1.2× (1.1×–1.6× over 3 rounds)");
    expect(line).toContain("pass (ratio missed the goal in 1 of 3 rounds)");
  });

  it("prints a plain pass when every round met the goal, and a miss as a miss", () => {
    expect(row(run([ratio(1.2)], { ratio: [1.1, 1.2, 1.3] }))).toMatch(/ \| pass \| /);
    expect(row(run([ratio(1.7)], { ratio: [1.6, 1.7, 1.8] }, "miss"))).toContain("| **miss** |");
  });
});
