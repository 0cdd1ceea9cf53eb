import type { CompiledQuery, Compilable } from "kysely";
import { db, type DB } from "./connection.server";

/**
 * Statements built once, run many times. Building a statement through Kysely (its immutable nodes, then the compiler's
 * walk over them) cost about as much as SQLite took to run it: a grid page's two statements spent 40 µs there of a
 * 0.2 ms loader (bench P1). A hot statement is built once per database and shape with placeholders where its values
 * go (`Slot`s, compiled into its parameters like any value), and each call fills in its own values.
 *
 * The rule that keeps this safe: the builder uses its slots only as values (compared, limited, interpolated), never
 * to decide what the statement says; whatever decides that belongs in the shape's key.
 */
export class Slot {
  constructor(readonly index: number) {}
}

/** `n` slots, typed as the values they stand for (a builder's code is the same for both). */
const slotsOf = (n: number) => Array.from({ length: n }, (_, i) => new Slot(i));

export class StatementCache {
  #db: DB | null = null;
  readonly #compiled = new Map<string, CompiledQuery>();

  /**
   * The rows of the statement `build` makes for `shape`, run with `values` in its slots (`build` gets one slot per
   * value, in order, and is called only the first time a shape is asked for on this database).
   */
  async rows<R, V extends unknown[]>(shape: string, values: V, build: (d: DB, ...slots: V) => Compilable<R>): Promise<R[]> {
    const d = db();
    if (this.#db !== d) {
      this.#db = d;
      this.#compiled.clear();
    }
    let query = this.#compiled.get(shape);
    if (!query) {
      query = build(d, ...(slotsOf(values.length) as V)).compile();
      // A slot Kysely did not make a parameter (inlined, or used to decide the statement) would run as "[object Object]".
      const placed = new Set(query.parameters.filter((p) => p instanceof Slot).map((p) => (p as Slot).index));
      if (placed.size !== values.length)
        throw new Error(`Statement "${shape}": ${values.length - placed.size} of its values are not parameters`);
      this.#compiled.set(shape, query);
    }
    const parameters = query.parameters.map((p) => (p instanceof Slot ? values[p.index] : p));
    return (await d.executeQuery<R>({ ...query, parameters })).rows;
  }
}
