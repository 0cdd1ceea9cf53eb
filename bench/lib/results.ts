import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { median, round } from "./stats";
import type { Check, MetricResult } from "./types";

export type Status = "pass" | "miss" | "error";

export interface MetricRecord extends Partial<MetricResult> {
  id: string;
  title: string;
  goal: string;
  status: Status;
  seconds: number;
  /** The error, or why the metric could not run. */
  reason?: string;
}

export interface RunRecord {
  timestamp: string;
  durationSeconds: number;
  selection: string[];
  machine: Record<string, unknown>;
  build?: { appSeconds: number };
  datasets: Record<string, { count: number; builtThisRun: boolean; buildSeconds: number; builtAt: string }>;
  metrics: MetricRecord[];
}

const fmt = (v: number | boolean | null | undefined, unit = "") =>
  typeof v === "boolean"
    ? v
      ? "yes"
      : "no"
    : v === null || v === undefined
      ? "–"
      : `${round(v)}${unit === "×" ? "×" : unit ? ` ${unit}` : ""}`;

/**
 * A check's rounds: the `perRound` series the check names (`Check.rounds`), whose median its value is; null for a
 * figure that is not a median of rounds (a single measure, a total, a yes or no). Records written before checks named
 * their series (up to 2026-12-03) are matched by value: the series whose median is exactly the check's value.
 */
export function roundsOf(m: { perRound?: MetricResult["perRound"]; checks?: Check[] }, check: Check): number[] | null {
  if (typeof check.value !== "number") return null;
  const series = m.perRound ?? {};
  if (check.rounds) return (series[check.rounds]?.length ?? 0) > 1 ? series[check.rounds]! : null;
  if (m.checks?.some((c) => c.rounds)) return null;
  for (const rounds of Object.values(series))
    if (rounds.length > 1 && rounds.every(Number.isFinite) && median(rounds) === check.value) return rounds;
  return null;
}

/** How many of a check's rounds miss its goal ("≤ 1.5", "≥ 0.9"); null when the goal is not a bound. */
export function roundsMissed(check: Check, rounds: number[]): number | null {
  const bound = /^([≤≥])\s*([\d.]+)/.exec(check.goal.replaceAll(",", ""));
  if (!bound) return null;
  const limit = Number(bound[2]);
  return rounds.filter((v) => !(bound[1] === "≤" ? v <= limit : v >= limit)).length;
}

/** Each check's median, with the spread of its rounds beside it: "ratio 1.23× (0.87–1.64 over 9 rounds)". */
const figureText = (m: MetricRecord) =>
  m.status === "error"
    ? (m.reason ?? "").split("\n")[0]!
    : (m.checks ?? [])
        .map((c) => {
          const rounds = roundsOf(m, c);
          const spread = rounds
            ? ` (${fmt(Math.min(...rounds), c.unit)}–${fmt(Math.max(...rounds), c.unit)} over ${rounds.length} rounds)`
            : "";
          return `${c.name} ${fmt(c.value, c.unit)}${spread}`;
        })
        .join(" · ");

/** A goal met in the median but not in every round says so: met is only met with room to spare (issue 31). */
const statusText = (m: MetricRecord) => {
  if (m.status === "miss") return "**miss**";
  if (m.status !== "pass") return m.status;
  const past = (m.checks ?? [])
    .map((c) => {
      const rounds = roundsOf(m, c);
      const n = rounds ? roundsMissed(c, rounds) : null;
      return n ? `${c.name} missed the goal in ${n} of ${rounds!.length} rounds` : null;
    })
    .filter(Boolean);
  return past.length ? `pass (${past.join("; ")})` : "pass";
};

const sideText = (side?: Record<string, number | string>) =>
  side
    ? Object.entries(side)
        .map(([k, v]) => `${k} ${typeof v === "number" ? round(v) : v}`)
        .join(", ")
    : "";

export function markdown(run: RunRecord): string {
  const m = run.machine as {
    cpus: { count: number; model: string };
    node: string;
    git: { commit: string; dirty: string[] };
    pinning: string;
  };
  const lines = [
    `# Benchmark results ${run.timestamp}`,
    "",
    `Commit \`${m.git.commit.slice(0, 12)}\`${m.git.dirty.length ? ` with uncommitted changes outside bench/ (${m.git.dirty.length} files)` : ""}, ` +
      `Node ${m.node}, ${m.cpus.count} × ${m.cpus.model}; ${m.pinning}. Run took ${Math.round(run.durationSeconds)} s.`,
    "",
    "| id | metric | figure (the range of its rounds beside a median of rounds) | goal | status | measured (median of rounds) | baseline |",
    "|---|---|---|---|---|---|---|",
    ...run.metrics.map((x) =>
      [x.id, x.title, figureText(x), x.goal, statusText(x), sideText(x.subject), sideText(x.baseline)]
        .map((cell) => cell.replaceAll("|", "\\|"))
        .join(" | ")
        .replace(/^/, "| ")
        .concat(" |"),
    ),
    "",
    "Datasets: " +
      Object.entries(run.datasets)
        .map(
          ([k, d]) =>
            `${k} (${d.count.toLocaleString("en")} images, ${d.builtThisRun ? "built in this run" : "cached"}, build ${d.buildSeconds} s)`,
        )
        .join("; ") +
      ".",
  ];
  const pairs = parity(run.metrics);
  if (pairs.length)
    lines.push(
      "",
      "## PostgreSQL beside SQLite",
      "",
      "Each metric that ran on both dialects in this run (`<id>-pg` beside `<id>`): PostgreSQL's figure ÷ SQLite's, for time (for a rate, SQLite's ÷ PostgreSQL's). Goal ≤ 3×.",
      "",
      "| metric | figure | SQLite | PostgreSQL | PostgreSQL ÷ SQLite |",
      "|---|---|---|---|---|",
      ...pairs.map(
        (p) => `| ${p.sqlite} / ${p.pg} | ${p.name} | ${fmt(p.sqliteValue, p.unit)} | ${fmt(p.pgValue, p.unit)} | ${fmt(p.ratio, "×")} |`,
      ),
    );
  const noted = run.metrics.filter((x) => x.notes?.length);
  if (noted.length) {
    lines.push("", "## Notes", "");
    for (const x of noted) for (const n of x.notes!) lines.push(`- **${x.id}**: ${n}`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The metrics measured on both dialects: `P5-pg` beside `P5`, `P5-pg-1m` beside `P5-1m`, `P5b-pg` beside `P5b`. The
 * figure compared is the measured side's p99 where it reports one, else its headline absolute figure.
 */
export function parity(metrics: MetricRecord[]) {
  const done = new Map(metrics.filter((m) => m.status === "pass" || m.status === "miss").map((m) => [m.id, m]));
  const figure = (m: MetricRecord) => {
    const p99 = Object.entries(m.subject ?? {}).find(([k, v]) => /p99/.test(k) && typeof v === "number");
    // "1M loader p99 ms" (P5-1m) and "loader p99 ms" (P5-pg-1m) name the same figure.
    if (p99) return { name: p99[0].replace(/ ms$/, "").replace(/^\d+[kM] /, ""), value: p99[1] as number, unit: "ms", rate: false };
    return m.absolute ? { ...m.absolute, rate: /\/s$/.test(m.absolute.unit) } : null;
  };
  return [...done.values()].flatMap((pg) => {
    if (!/-pg\b/.test(pg.id)) return [];
    const sqlite = done.get(pg.id.replace("-pg", ""));
    const a = sqlite && figure(sqlite);
    const b = figure(pg);
    if (!a || !b || a.name !== b.name || !a.value || !b.value) return [];
    return [
      {
        sqlite: sqlite.id,
        pg: pg.id,
        name: a.name,
        unit: a.unit,
        sqliteValue: a.value,
        pgValue: b.value,
        ratio: a.rate ? a.value / b.value : b.value / a.value,
      },
    ];
  });
}

/** Writes <timestamp>.json and .md, and copies the markdown to LATEST.md. */
export function writeResults(dir: string, run: RunRecord) {
  mkdirSync(dir, { recursive: true });
  const base = path.join(dir, run.timestamp.replace(/:/g, "-").replace(/\.\d+Z$/, "Z"));
  writeFileSync(`${base}.json`, `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown(run));
  copyFileSync(`${base}.md`, path.join(dir, "LATEST.md"));
  return { json: `${base}.json`, md: `${base}.md` };
}

/** Earlier result files, newest first. */
function earlierRuns(dir: string, current: string): { file: string; run: RunRecord }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json") && path.join(dir, f) !== current)
    .sort()
    .reverse()
    .flatMap((f) => {
      try {
        return [{ file: f, run: JSON.parse(readFileSync(path.join(dir, f), "utf8")) as RunRecord }];
      } catch {
        return [];
      }
    });
}

const change = (now: number, before: number) =>
  before ? `${now >= before ? "+" : ""}${(((now - before) / Math.abs(before)) * 100).toFixed(1)}%` : "";

/** For every metric of this run: its figure and ratio against the newest earlier result file that has it. */
export function comparison(dir: string, currentFile: string, run: RunRecord): string[] {
  const earlier = earlierRuns(dir, currentFile);
  if (!earlier.length) return ["No earlier result file to compare with."];
  const lines: string[] = [];
  for (const m of run.metrics) {
    const found = earlier.find((e) => e.run.metrics.some((x) => x.id === m.id && typeof x.figure === "number"));
    const before = found?.run.metrics.find((x) => x.id === m.id);
    if (!found || !before) {
      lines.push(`${m.id.padEnd(7)} no earlier figure`);
      continue;
    }
    if (typeof m.figure !== "number") {
      lines.push(`${m.id.padEnd(7)} ${m.status} now; was ${fmt(before.figure, before.unit)} (${before.status}) in ${found.file}`);
      continue;
    }
    const ratio = `${fmt(before.figure, before.unit)} → ${fmt(m.figure, m.unit)} (${change(m.figure, before.figure!)})`;
    const abs =
      m.absolute && before.absolute && m.absolute.name === before.absolute.name
        ? `; ${m.absolute.name} ${fmt(before.absolute.value, before.absolute.unit)} → ${fmt(m.absolute.value, m.absolute.unit)} (${change(m.absolute.value, before.absolute.value)})`
        : "";
    const status = before.status === m.status ? m.status : `${before.status} → ${m.status}`;
    lines.push(`${m.id.padEnd(7)} ${ratio}${abs}; ${status}   [vs ${found.file}]`);
  }
  return lines;
}
