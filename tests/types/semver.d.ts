// The two functions of semver (a direct devDependency, pinned to the copy the dependency tree already has) that
// tests/unit/engines.test.ts uses.
declare module "semver" {
  export function satisfies(version: string, range: string): boolean;
  export function subset(sub: string, dom: string): boolean;
}
