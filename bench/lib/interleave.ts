/**
 * A/B rounds: each round runs both sides once, alternating which goes first (A B, B A, A B, …), so a drift
 * in the shared machine's speed falls on both sides alike. Ratios are taken per round, then the median.
 */
export async function interleave<A, B = A>(
  rounds: number,
  a: () => Promise<A>,
  b: () => Promise<B>,
  onRound?: (r: number, a: A, b: B) => void,
) {
  const as: A[] = [];
  const bs: B[] = [];
  for (let r = 0; r < rounds; r++) {
    let ra: A;
    let rb: B;
    if (r % 2 === 0) {
      ra = await a();
      rb = await b();
    } else {
      rb = await b();
      ra = await a();
    }
    as.push(ra);
    bs.push(rb);
    onRound?.(r, ra, rb);
  }
  return { a: as, b: bs };
}
