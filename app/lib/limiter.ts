/**
 * At most `count` of the works handed to the function it returns run at once; the others wait, first come first
 * served. For work whose cost is a bounded resource of this process: image decodes, a core each.
 */
export function limiter(count: number) {
  let free = Math.max(1, count);
  const waiting: (() => void)[] = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (free > 0) free -= 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free += 1;
    }
  };
}
