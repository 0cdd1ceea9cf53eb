export interface SkipLink {
  href: string;
  label: string;
}

/** Where a grid page's skip links lead: its cards, and its search sidebar (both focusable by script only). */
export const IMAGES_TARGET = "images";
export const SIDEBAR_TARGET = "search-and-filters";

export const SKIP_TO_CONTENT: SkipLink = { href: "#main", label: "Skip to content" };
export const SKIP_TO_IMAGES: SkipLink = { href: `#${IMAGES_TARGET}`, label: "Skip to images" };
export const SKIP_TO_SIDEBAR: SkipLink = { href: `#${SIDEBAR_TARGET}`, label: "Skip to search and filters" };

/**
 * A route's `handle` may name skip links of its own, shown after 'Skip to content': a grid page's sidebar comes
 * before its cards, and a keyboard user should not Tab through every filter to reach the first image.
 */
export interface SkipLinksHandle {
  skipLinks?: SkipLink[];
}
export const GRID_PAGE_HANDLE: SkipLinksHandle = { skipLinks: [SKIP_TO_IMAGES, SKIP_TO_SIDEBAR] };

/** The first stops of the page's tab order, each shown where it is while it has focus. */
export function SkipLinks({ links }: { links: SkipLink[] }) {
  return (
    <>
      {links.map((link) => (
        <a key={link.href} href={link.href} className="skip-link">
          {link.label}
        </a>
      ))}
    </>
  );
}
