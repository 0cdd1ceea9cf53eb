import { Form, Link, useSubmit } from "@remix-run/react";
import { useEffect, useRef, useState } from "react";
import { useHydrated } from "remix-utils/use-hydrated";
import { withFilterQuery, type GridFilter } from "~/lib/grid-filter";
import { MAX_QUERY_LENGTH } from "~/lib/keywords-query";
import { MAX_TAG_LENGTH, MAX_TAGS, tagsOf } from "~/lib/smart-tags";
import { Carry } from "./carry-filter";

/** What the server says about the smart search in the URL (services/smart-search.server.ts, smartPanel). */
export interface SmartPanelData {
  phrase: string;
  tags: string[];
  description: string;
  edited: boolean;
  failed: boolean;
}

/**
 * The sidebar's smart search (spec 1, Sidebar): a phrase (GET `smart`, GO), then the panel: the description and the
 * tags it became, which the grid is found by (most tags held first). The tags are one comma-separated text field
 * without JavaScript; with it, chips to remove and a box to add one, each change applied at once.
 */
export function SmartSearch({ path, filter, panel }: { path: string; filter: GridFilter; panel: SmartPanelData | null }) {
  return (
    <section aria-labelledby="smart-search-title" className="smart-search">
      <h2 className="search-sidebar-title" id="smart-search-title">
        Smart search
      </h2>
      <Form method="get" action={path} role="search" aria-label="Smart search" preventScrollReset className="keyword-search">
        <label htmlFor="smart-search-phrase" className="sr-only">
          Describe the images you are looking for
        </label>
        <input
          key={filter.smart ?? ""}
          id="smart-search-phrase"
          type="search"
          name="smart"
          defaultValue={filter.smart ?? ""}
          placeholder="Describe what you need"
          maxLength={MAX_QUERY_LENGTH}
          autoComplete="off"
          enterKeyHint="search"
          required
          pattern=".*\S.*"
        />
        {/* A new phrase gets new tags: the old ones stay behind. */}
        <Carry filter={filter} smart={false} tags={false} />
        <button type="submit" className="btn btn-primary">
          GO
        </button>
      </Form>
      {panel ? <SmartPanel path={path} filter={filter} panel={panel} /> : null}
    </section>
  );
}

/** The description, the tags to edit and (in a grid's sidebar) the way out of the smart search. */
export function SmartPanel({
  path,
  filter,
  panel,
  clearable = true,
}: {
  path: string;
  filter: GridFilter;
  panel: SmartPanelData;
  clearable?: boolean;
}) {
  return (
    <div className="smart-panel">
      {panel.failed ? (
        <p className="smart-failed" role="status">
          Failed to connect to server
        </p>
      ) : null}
      <p className="smart-description" role="status">
        {panel.edited ? "Showing images with the tags as you edited them, those with the most of them first." : panel.description}
      </p>
      <Form method="get" action={path} preventScrollReset className="smart-tags">
        <Carry filter={filter} tags={false} />
        <TagEditor tags={panel.tags} />
      </Form>
      {clearable ? (
        <Link to={withFilterQuery(path, { ...filter, smart: undefined, tags: undefined })} preventScrollReset>
          Clear smart search
        </Link>
      ) : null}
    </div>
  );
}

/** The tags: a text field until JavaScript runs, then chips (× removes one, Enter in the box adds one). */
function TagEditor({ tags: initial }: { tags: string[] }) {
  const hydrated = useHydrated();
  const submit = useSubmit();
  const [tags, setTags] = useState(initial);
  const [typed, setTyped] = useState("");
  const hidden = useRef<HTMLInputElement>(null);
  const adder = useRef<HTMLInputElement>(null);
  const pending = useRef(false);
  // The server's list once it answers (or a Back): the editor stays mounted, so focus stays where it was.
  const given = initial.join(",");
  useEffect(() => setTags(given ? given.split(",") : []), [given]);
  // Submit after React has written the new list into the hidden field.
  useEffect(() => {
    if (pending.current && hidden.current?.form) {
      pending.current = false;
      submit(hidden.current.form, { preventScrollReset: true });
    }
  }, [tags, submit]);
  const change = (next: string[]) => {
    pending.current = true;
    setTags(next);
  };

  if (!hydrated)
    return (
      <>
        <label htmlFor="smart-tags-text">Tags (comma-separated)</label>
        <div className="keyword-search">
          <input id="smart-tags-text" type="text" name="tags" defaultValue={initial.join(", ")} autoComplete="off" />
          <button type="submit" className="btn">
            Search by tags
          </button>
        </div>
      </>
    );
  return (
    <>
      <input ref={hidden} type="hidden" name="tags" value={tags.join(",")} />
      <ul className="tag-chips" aria-label="Tags searched by">
        {tags.map((tag) => (
          <li key={tag} className="tag-chip">
            <span>{tag}</span>
            <button
              type="button"
              aria-label={`Remove tag ${tag}`}
              onClick={() => {
                adder.current?.focus(); // the chip's button goes away with it
                change(tags.filter((t) => t !== tag));
              }}
            >
              ×
            </button>
          </li>
        ))}
        {tags.length === 0 ? <li className="muted">No tags: add one to search by.</li> : null}
      </ul>
      <label htmlFor="smart-tag-add" className="sr-only">
        Add a tag
      </label>
      <input
        ref={adder}
        id="smart-tag-add"
        type="text"
        value={typed}
        placeholder="Add a tag and press Enter"
        maxLength={MAX_TAG_LENGTH}
        autoComplete="off"
        disabled={tags.length >= MAX_TAGS}
        onChange={(e) => setTyped(e.target.value)}
        onKeyDown={(e) => {
          if (e.key !== "Enter") return;
          e.preventDefault();
          const added = tagsOf([...tags, typed].join(","));
          setTyped("");
          if (added.length > tags.length) change(added);
        }}
      />
    </>
  );
}
