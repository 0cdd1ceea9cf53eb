import { readFileSync } from "node:fs";
import { satisfies, subset } from "semver";
import { describe, expect, it } from "vitest";

// package.json's `engines.node` says which Node.js versions Koala runs on. It is only true if every locked package
// (runtime and tooling: `npm test` needs both) supports every version it admits, so check it against the lock file.
type LockEntry = { engines?: { node?: unknown }; os?: string[]; cpu?: string[] };
const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as { packages: Record<string, LockEntry> };
const ours = pkg.engines.node;

// A platform list like ["win32"] or ["!win32"] admits this machine's platform or not.
const admits = (list: string[] | undefined, here: string) =>
  !list || (list.some((x) => !x.startsWith("!")) ? list.includes(here) : !list.includes(`!${here}`));

describe("engines.node in package.json", () => {
  it("matches the lock file's root entry", () => {
    expect(lock.packages[""]?.engines).toEqual(pkg.engines);
  });

  it("admits no Node.js version that a locked package does not support", () => {
    const conflicts = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== "" && admits(entry.os, process.platform) && admits(entry.cpu, process.arch))
      .flatMap(([path, entry]) => {
        const theirs = entry.engines?.node;
        return typeof theirs === "string" && !subset(ours, theirs) ? [`${path.replace(/^node_modules\//, "")}: ${theirs}`] : [];
      });
    expect(conflicts, `engines.node "${ours}" admits versions these packages do not support`).toEqual([]);
  });

  it("admits the Node.js 20 and 22 LTS versions the suite is run on", () => {
    for (const version of ["20.20.2", "22.23.3"]) expect(satisfies(version, ours), version).toBe(true);
  });
});
