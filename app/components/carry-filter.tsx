import { attrParams, type GridFilter } from "~/lib/grid-filter";

/** Hidden fields that carry the rest of the grid's filter along with a form that changes one part of it. */
export function Carry({
  filter,
  q = true,
  smart = true,
  tags = true,
  attrs = true,
}: {
  filter: GridFilter;
  q?: boolean;
  smart?: boolean;
  tags?: boolean;
  attrs?: boolean;
}) {
  return (
    <>
      {q && filter.q ? <input type="hidden" name="q" value={filter.q} /> : null}
      {smart && filter.smart ? <input type="hidden" name="smart" value={filter.smart} /> : null}
      {tags && filter.tags ? <input type="hidden" name="tags" value={filter.tags.join(",")} /> : null}
      {attrs ? attrParams(filter.attrs).map((f) => <input key={f} type="hidden" name="f" value={f} />) : null}
      {filter.review ? <input type="hidden" name="review" value={filter.review} /> : null}
    </>
  );
}
