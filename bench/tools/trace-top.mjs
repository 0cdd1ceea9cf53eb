// Summarises a Chrome trace (P8b writes one for its first pass with BENCH_CPU_PROF=1): the renderer main
// thread's tasks over 50 ms and, inside them, the self time per trace event (Layout, FunctionCall, Paint, …); then
// the busiest threads of every Chromium process. P8b pins the whole browser to one core, so a task's length counts
// the time other threads (image decoding, raster, the browser's own pages) held that core.
// Usage: node bench/tools/trace-top.mjs <trace.json> [count]
import { readFileSync } from "node:fs";

const [file, count = "20"] = process.argv.slice(2);
const data = JSON.parse(readFileSync(file, "utf8"));
const events = Array.isArray(data) ? data : data.traceEvents;
const processes = new Map(events.filter((e) => e.ph === "M" && e.name === "process_name").map((e) => [e.pid, e.args?.name]));
const threads = new Map(events.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => [`${e.pid}:${e.tid}`, e.args?.name]));
// The page's main thread: a web page's renderer ("Renderer"), not the browser's own pages ("WebUI Top Renderer").
const main = new Set(
  [...threads]
    .filter(([key, name]) => name === "CrRendererMain" && processes.get(Number(key.split(":")[0])) === "Renderer")
    .map(([key]) => key),
);
const onMain = events
  .filter((e) => e.ph === "X" && e.dur !== undefined && main.has(`${e.pid}:${e.tid}`))
  .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
const isTask = (e) => e.name === "RunTask" || e.name === "ThreadControllerImpl::RunTask";
const long = onMain.filter((e) => isTask(e) && e.dur > 50_000);
console.log(
  `${file}: ${long.length} main-thread tasks over 50 ms: ${long
    .map((t) => Math.round(t.dur / 1000))
    .sort((a, b) => b - a)
    .slice(0, 15)
    .join(", ")} ms`,
);

const totals = new Map();
const add = (name, us) => totals.set(name, (totals.get(name) ?? 0) + us);
for (const task of long) {
  const end = task.ts + task.dur;
  const inside = onMain.filter((e) => e !== task && !isTask(e) && e.ts >= task.ts && e.ts + e.dur <= end);
  // Self time: each event's duration minus that of the events directly nested in it.
  const stack = [{ name: "(task, outside any traced event)", end, self: task.dur }];
  const all = [stack[0]];
  for (const e of inside) {
    while (stack.at(-1).end <= e.ts) stack.pop();
    stack.at(-1).self -= e.dur;
    const node = { name: e.name, end: e.ts + e.dur, self: e.dur };
    stack.push(node);
    all.push(node);
  }
  for (const n of all) add(n.name, Math.max(0, n.self));
}
for (const [name, us] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, Number(count)))
  console.log(`${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`);

// Busy time per thread: the union of its top-level events (nested events are not counted twice).
const byThread = new Map();
for (const e of events) {
  if (e.ph !== "X" || !e.dur) continue;
  const key = `${e.pid}:${e.tid}`;
  if (!byThread.has(key)) byThread.set(key, []);
  byThread.get(key).push(e);
}
const busy = [...byThread].map(([key, list]) => {
  list.sort((a, b) => a.ts - b.ts);
  let until = 0;
  let us = 0;
  for (const e of list)
    if (e.ts >= until) {
      us += e.dur;
      until = e.ts + e.dur;
    }
  // What the thread spent it on: its events by name (nested ones counted too, so an outer task and its parts both show).
  const names = new Map();
  for (const e of list) if (!isTask(e)) names.set(e.name, (names.get(e.name) ?? 0) + e.dur);
  const top = [...names].sort((a, b) => b[1] - a[1]).slice(0, 3);
  return {
    name: `${processes.get(Number(key.split(":")[0])) ?? "?"} / ${threads.get(key) ?? key}`,
    us,
    top: top.map(([n, t]) => `${n} ${(t / 1000).toFixed(0)} ms`).join(", "),
  };
});
console.log("\nBusiest threads over the whole trace");
for (const { name, us, top } of busy.sort((a, b) => b.us - a.us).slice(0, 8))
  console.log(`${(us / 1000).toFixed(0).padStart(7)} ms  ${name}${top ? ` (${top})` : ""}`);
