/** Inline SVG icons (no icon font: a missing glyph renders as an empty box). Decorative: the link or button names itself. */
const paths = {
  edit: "M4 20h4l10.5-10.5-4-4L4 16v4zm12.5-16.5 4 4 1.5-1.5a1.4 1.4 0 0 0 0-2l-2-2a1.4 1.4 0 0 0-2 0z",
  upload: "M12 3 6.5 8.5l1.4 1.4L11 6.8V16h2V6.8l3.1 3.1 1.4-1.4zM5 18v2h14v-2z",
  plus: "M11 5v6H5v2h6v6h2v-6h6v-2h-6V5z",
  dots: "M12 7a2 2 0 1 0 0-4 2 2 0 0 0 0 4zm0 7a2 2 0 1 0 0-4 2 2 0 0 0 0 4zm0 7a2 2 0 1 0 0-4 2 2 0 0 0 0 4z",
  share: "M18 16a3 3 0 0 0-2.2 1l-6.9-4a3 3 0 0 0 0-2l6.9-4A3 3 0 1 0 15 5l-6.9 4a3 3 0 1 0 0 6l6.9 4A3 3 0 1 0 18 16z",
} as const;

export function Icon({ name }: { name: keyof typeof paths }) {
  return (
    <svg className="icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      <path d={paths[name]} fill="currentColor" />
    </svg>
  );
}
