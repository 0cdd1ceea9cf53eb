import { attrParams, type GridFilter } from "~/lib/grid-filter";

/** Hidden fields that carry the rest of the grid's filter along with a form that changes one part of it. */
export function Carry({
  filter,
  q = true,
  smart = true,
  tags = true,
  attrs = true,
  taken = true,
}: {
  filter: GridFilter;
  q?: boolean;
  smart?: boolean;
  tags?: boolean;
  attrs?: boolean;
  /** The capture date's order and range. */
  taken?: boolean;
}) {
  return (
    <>
      {q && filter.q ? <input type="hidden" name="q" value={filter.q} /> : null}
      {smart && filter.smart ? <input type="hidden" name="smart" value={filter.smart} /> : null}
      {tags && filter.tags ? <input type="hidden" name="tags" value={filter.tags.join(",")} /> : null}
      {attrs ? attrParams(filter.attrs).map((f) => <input key={f} type="hidden" name="f" value={f} />) : null}
      {filter.review ? <input type="hidden" name="review" value={filter.review} /> : null}
      {taken && filter.sort ? <input type="hidden" name="sort" value={filter.sort} /> : null}
      {taken && filter.takenFrom ? <input type="hidden" name="takenFrom" value={filter.takenFrom} /> : null}
      {taken && filter.takenTo ? <input type="hidden" name="takenTo" value={filter.takenTo} /> : null}
    </>
  );
}
