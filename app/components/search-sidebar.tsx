import { Form, Link, useSubmit } from "@remix-run/react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useRef, useState, type CSSProperties } from "react";
import { useHydrated } from "remix-utils/use-hydrated";
import { withFilterQuery, type GridFilter, type TakenRangeProblems } from "~/lib/grid-filter";
import { MAX_QUERY_LENGTH } from "~/lib/keywords-query";
import type { Facet, FacetValue } from "~/models/facets.server";
import { Carry } from "./carry-filter";
import { SIDEBAR_TARGET } from "./skip-links";
import { SmartSearch, type SmartPanelData } from "./smart-search";

/** Lists this long get a 'start typing...' box (spec 1, Sidebar). */
export const LONG_LIST = 30;

interface SidebarProps {
  /** The grid's path without its query. */
  path: string;
  filter: GridFilter;
  /** Whether smart search is offered (not on shared boards), and its panel when the URL holds one. */
  smartOffered?: boolean;
  smart?: SmartPanelData | null;
  /** Whether the capture date's order and range are offered (not on shared boards). */
  captureOffered?: boolean;
  /** What is wrong with the capture date range the URL asked for, by field. */
  captureProblems?: TakenRangeProblems;
  /** The attribute filters, or null where they are not offered. */
  facets: Facet[] | null;
  /** What each long list's 'start typing...' box holds (`v<attribute id>` in the URL). */
  narrow?: Record<string, string>;
}

/**
 * The grid's search sidebar (spec 1, Sidebar): keyword search and attribute filters, both GET forms, so everything
 * lives in the URL (bookmarkable, works without JavaScript) and the grid, its count, select all and the bulk actions
 * apply to the result. With JavaScript the forms navigate in place (scroll and focus stay) and a ticked box applies
 * at once.
 */
export function SearchSidebar({
  path,
  filter,
  facets,
  narrow = {},
  smartOffered = false,
  smart = null,
  captureOffered = false,
  captureProblems = {},
}: SidebarProps) {
  return (
    <aside id={SIDEBAR_TARGET} tabIndex={-1} className="search-sidebar skip-target" aria-label="Search and filters">
      <KeywordSearch path={path} filter={filter} />
      {smartOffered ? <SmartSearch path={path} filter={filter} panel={smart} /> : null}
      {captureOffered ? <CaptureDate path={path} filter={filter} problems={captureProblems} /> : null}
      {facets ? <AttributeFilters path={path} filter={filter} facets={facets} narrow={narrow} /> : null}
    </aside>
  );
}

function KeywordSearch({ path, filter }: { path: string; filter: GridFilter }) {
  const q = filter.q ?? "";
  const input = useRef<HTMLInputElement>(null);
  // A search changed by a link (Clear search, Back) shows in the box, unless the person is typing in it.
  useEffect(() => {
    if (input.current && document.activeElement !== input.current) input.current.value = q;
  }, [q]);
  return (
    <section aria-labelledby="keyword-search-title">
      <h2 className="search-sidebar-title" id="keyword-search-title">
        Keyword search
      </h2>
      <Form method="get" action={path} role="search" aria-label="Keyword search" preventScrollReset className="keyword-search">
        <label htmlFor="keyword-search-q" className="sr-only">
          Search words
        </label>
        <input
          ref={input}
          id="keyword-search-q"
          type="search"
          name="q"
          defaultValue={q}
          placeholder="Search here"
          maxLength={MAX_QUERY_LENGTH}
          autoComplete="off"
          enterKeyHint="search"
        />
        <Carry filter={filter} q={false} />
        <button type="submit" className="btn btn-primary">
          GO
        </button>
      </Form>
      <p className="search-help muted">Every word must match; &quot;quotes&quot; match a phrase; the last word may be the start of one.</p>
      {q ? (
        <p className="search-status" role="status">
          Showing images matching <q>{q.trim()}</q>.{" "}
          <Link to={withFilterQuery(path, { ...filter, q: undefined })} preventScrollReset>
            Clear search
          </Link>
        </p>
      ) : null}
    </section>
  );
}

/**
 * The capture date (EXIF): the grid newest taken first instead of newest added, and a range of days. A GET form like
 * the others; the dates are the camera's own clock.
 */
function CaptureDate({ path, filter, problems }: { path: string; filter: GridFilter; problems: TakenRangeProblems }) {
  const ranged = Boolean(filter.takenFrom || filter.takenTo);
  const errorOf = (name: keyof TakenRangeProblems) =>
    problems[name] ? { "aria-invalid": true, "aria-describedby": `capture-${name}-error` } : {};
  return (
    <section aria-labelledby="capture-date-title" className="capture-date-filter">
      <h2 className="search-sidebar-title" id="capture-date-title">
        Capture date
      </h2>
      <Form
        method="get"
        action={path}
        preventScrollReset
        className="capture-date"
        key={`${filter.sort}-${filter.takenFrom}-${filter.takenTo}`}
      >
        <Carry filter={filter} taken={false} />
        <label htmlFor="capture-sort">Order</label>
        <select id="capture-sort" name="sort" defaultValue={filter.sort ?? ""}>
          <option value="">Newest added first</option>
          <option value="taken">Newest taken first</option>
        </select>
        <label htmlFor="capture-from">Taken from</label>
        <input
          id="capture-from"
          type="date"
          name="takenFrom"
          defaultValue={filter.takenFrom ?? ""}
          min="1970-01-01"
          {...errorOf("takenFrom")}
        />
        <FieldError id="capture-takenFrom-error" message={problems.takenFrom} />
        <label htmlFor="capture-to">Taken to</label>
        <input id="capture-to" type="date" name="takenTo" defaultValue={filter.takenTo ?? ""} min="1970-01-01" {...errorOf("takenTo")} />
        <FieldError id="capture-takenTo-error" message={problems.takenTo} />
        <button type="submit" className="btn">
          Apply
        </button>
      </Form>
      {ranged ? (
        <p className="search-status" role="status">
          Showing images taken{" "}
          {filter.takenFrom && filter.takenTo
            ? `from ${filter.takenFrom} to ${filter.takenTo}`
            : filter.takenFrom
              ? `on ${filter.takenFrom} or after`
              : `on ${filter.takenTo} or before`}
          .{" "}
          <Link to={withFilterQuery(path, { ...filter, takenFrom: undefined, takenTo: undefined })} preventScrollReset>
            Clear dates
          </Link>
        </p>
      ) : null}
    </section>
  );
}

/** A field's problem under it, as forms.tsx's fields show theirs (nothing when there is none). */
function FieldError({ id, message }: { id: string; message?: string }) {
  return message ? (
    <p id={id} className="field-error">
      {message}
    </p>
  ) : null;
}

function AttributeFilters({
  path,
  filter,
  facets,
  narrow,
}: Required<Pick<SidebarProps, "path" | "filter" | "narrow">> & { facets: Facet[] }) {
  const submit = useSubmit();
  const chosen = Object.keys(filter.attrs ?? {}).length > 0;
  return (
    <section aria-labelledby="attribute-filters-title" className="attribute-filters">
      <h2 className="search-sidebar-title" id="attribute-filters-title">
        Attributes
      </h2>
      <details className="mix-rule">
        <summary>How filters combine</summary>
        <p>
          Values of one attribute widen the result: an image with any of them is shown (OR). Values of different attributes narrow it: an
          image must match each attribute (AND). The number beside a value is how many images it would give with your other choices.
        </p>
      </details>
      {facets.length === 0 ? (
        <p className="muted">No filters found</p>
      ) : (
        <Form
          method="get"
          action={path}
          preventScrollReset
          onChange={(event) => {
            // With JavaScript a ticked box applies at once (the typing boxes only narrow their lists).
            const box = event.target as HTMLInputElement;
            if (box.type !== "checkbox") return;
            // A long list's chosen values also ride in hidden fields (its rows come and go): an untick drops that one too.
            for (const hidden of event.currentTarget.querySelectorAll<HTMLInputElement>("input[data-chosen]"))
              if (hidden.value === box.value) hidden.disabled = !box.checked;
            submit(event.currentTarget, { preventScrollReset: true });
          }}
        >
          <Carry filter={filter} attrs={false} />
          {facets.map((facet) => (
            <FacetGroup key={facet.id} facet={facet} typed={narrow[String(facet.id)] ?? ""} />
          ))}
          <div className="attribute-actions">
            <button type="submit" className="btn">
              Apply filters
            </button>
            {chosen ? (
              <Link to={withFilterQuery(path, { ...filter, attrs: undefined })} preventScrollReset>
                Clear Filter
              </Link>
            ) : null}
          </div>
        </Form>
      )}
    </section>
  );
}

function FacetGroup({ facet, typed }: { facet: Facet; typed: string }) {
  const hydrated = useHydrated();
  const [text, setText] = useState(typed);
  const long = facet.values.length >= LONG_LIST;
  const needle = text.trim().toLowerCase();
  // Chosen values stay in view whatever is typed.
  const shown = long && needle ? facet.values.filter((v) => v.chosen || v.value.toLowerCase().includes(needle)) : facet.values;
  return (
    <fieldset className="facet">
      <legend>{facet.name}</legend>
      {long ? (
        <>
          <label htmlFor={`facet-${facet.id}-find`} className="sr-only">
            Find a {facet.name} value
          </label>
          <input
            id={`facet-${facet.id}-find`}
            type="search"
            // Without JavaScript the typed text narrows the list through the URL; with it the list narrows as it is
            // typed, and an empty box would only put `v4=` in the address of every tick.
            name={hydrated && !text ? undefined : `v${facet.id}`}
            placeholder="start typing..."
            value={text}
            onChange={(e) => setText(e.target.value)}
            autoComplete="off"
            className="facet-find"
          />
        </>
      ) : null}
      {long && hydrated ? (
        <VirtualValues facet={facet} shown={shown} />
      ) : (
        <ul className={long ? "facet-values facet-values-long" : "facet-values"}>
          {shown.map((v) => (
            <ValueRow key={v.value} facet={facet} value={v} />
          ))}
          {shown.length === 0 ? <li className="muted">No values match</li> : null}
        </ul>
      )}
    </fieldset>
  );
}

function ValueRow({ facet, value: v, style }: { facet: Facet; value: FacetValue; style?: CSSProperties }) {
  const id = `facet-${facet.id}-${v.value}`;
  const none = v.count === 0 && !v.chosen;
  return (
    <li className={none ? "facet-none" : undefined} style={style}>
      <Tick id={id} value={`${facet.id}:${v.value}`} chosen={v.chosen} disabled={none} />
      <label htmlFor={id}>
        {v.value} <span className="facet-count">({v.count})</span>
      </label>
    </li>
  );
}

/** Rows of the spec's searchable virtual list: 35 px each, in a box at most 200 px tall and 400 px wide. */
const ROW = 35;

/**
 * A long list with JavaScript: only the rows in view (and a few around) are in the page, so a list of thousands of
 * values stays light. Rows scrolled out of view take their boxes with them, so the chosen values also ride in
 * hidden fields of their own (the form then always carries every choice); a tick applies at once, as elsewhere.
 */
function VirtualValues({ facet, shown }: { facet: Facet; shown: FacetValue[] }) {
  const box = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: shown.length, getScrollElement: () => box.current, estimateSize: () => ROW, overscan: 6 });
  return (
    <>
      {facet.values
        .filter((v) => v.chosen)
        .map((v) => (
          <input key={v.value} type="hidden" name="f" value={`${facet.id}:${v.value}`} data-chosen />
        ))}
      <div ref={box} className="facet-values-long facet-virtual">
        {shown.length === 0 ? (
          <p className="muted">No values match</p>
        ) : (
          <ul className="facet-values" style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
            {virtualizer.getVirtualItems().map((row) => (
              <ValueRow
                key={shown[row.index]!.value}
                facet={facet}
                value={shown[row.index]!}
                style={{ position: "absolute", top: 0, left: 0, right: 0, height: ROW, transform: `translateY(${row.start}px)` }}
              />
            ))}
          </ul>
        )}
      </div>
    </>
  );
}

/** A value's box: the person's tick stays as clicked while the page updates; a change by a link (Clear Filter) shows. */
function Tick({ id, value, chosen, disabled }: { id: string; value: string; chosen: boolean; disabled: boolean }) {
  const box = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (box.current) box.current.checked = chosen;
  }, [chosen]);
  return <input ref={box} type="checkbox" id={id} name="f" value={value} defaultChecked={chosen} disabled={disabled} />;
}
