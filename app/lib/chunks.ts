/** A list cut into slices of at most `size`: what bounds the parameters of one statement. */
export const chunksOf = <T>(list: T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size));
