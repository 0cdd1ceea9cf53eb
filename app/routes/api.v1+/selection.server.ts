import { ApiProblem } from "./api.server";

/**
 * Every id of a bulk request is checked: one that is not in the scope (unknown, another project's, not on the
 * board) makes the whole request 404, naming the ids, and nothing changes.
 */
export function requireAll(asked: number[], found: number[]) {
  const known = new Set(found);
  const missing = [...new Set(asked)].filter((id) => !known.has(id));
  if (missing.length)
    throw new ApiProblem(404, "Image not found", {
      errors: missing.slice(0, 20).map((id) => ({ pointer: `/imageIds/${asked.indexOf(id)}`, detail: `No image ${id} here` })),
    });
}
