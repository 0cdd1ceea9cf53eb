import { Form, Link } from "@remix-run/react";
import { useEffect, useRef } from "react";
import { MAX_QUERY_LENGTH } from "~/lib/keywords-query";

/**
 * The grid's search sidebar (spec 1, Sidebar): keyword search, a GET form, so the search lives in the URL
 * (bookmarkable, works without JavaScript) and the grid, its count, select all and the bulk actions apply to the
 * result. With JavaScript the form navigates in place: the grid updates, scroll and focus stay.
 * `keep`: other parameters of the grid's URL that a new search keeps (a board's review filter).
 */
export function SearchSidebar({ q, clearTo, keep = {} }: { q: string; clearTo: string; keep?: Record<string, string> }) {
  const input = useRef<HTMLInputElement>(null);
  // A search changed by a link (Clear search, Back) shows in the box, unless the person is typing in it.
  useEffect(() => {
    if (input.current && document.activeElement !== input.current) input.current.value = q;
  }, [q]);
  return (
    <aside className="search-sidebar" aria-label="Search">
      <h2 className="search-sidebar-title">Keyword search</h2>
      <Form method="get" role="search" preventScrollReset className="keyword-search">
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
        {Object.entries(keep).map(([name, value]) => (
          <input key={name} type="hidden" name={name} value={value} />
        ))}
        <button type="submit" className="btn btn-primary">
          GO
        </button>
      </Form>
      <p className="search-help muted" id="keyword-search-help">
        Every word must match; &quot;quotes&quot; match a phrase; the last word may be the start of one.
      </p>
      {q ? (
        <p className="search-status" role="status">
          Showing images matching <q>{q.trim()}</q>.{" "}
          <Link to={clearTo} preventScrollReset>
            Clear search
          </Link>
        </p>
      ) : null}
    </aside>
  );
}
