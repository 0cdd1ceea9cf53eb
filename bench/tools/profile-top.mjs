// Summarises a V8 .cpuprofile (node --cpu-prof, or BENCH_CPU_PROF=1 npm run bench): the functions with the
// most self time, and the packages/files they live in. Usage: node bench/tools/profile-top.mjs <file> [count]
import { readFileSync } from "node:fs";

const [file, count = "25"] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (dt[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const where = (url) =>
  url.includes("node_modules/")
    ? url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, "$1")
    : url
      ? url.replace(/^.*\/(build|app|bench)\//, "$1/")
      : "(native)";
const fns = new Map();
const pkgs = new Map();
for (const [id, us] of self) {
  const { callFrame: f } = byId.get(id);
  const key = `${f.functionName || "(anonymous)"}  ${where(f.url)}:${f.lineNumber + 1}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
  pkgs.set(where(f.url), (pkgs.get(where(f.url)) ?? 0) + us);
}
const show = (title, map) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(count)))
    console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
};
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
show("Self time by function", fns);
show("Self time by package / file", pkgs);
