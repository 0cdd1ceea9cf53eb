/** The Koala mark and word. */
export function Logo({ small = false }: { small?: boolean }) {
  return (
    <span className={small ? "logo logo-small" : "logo"}>
      <svg viewBox="0 0 64 64" aria-hidden="true" focusable="false" width={small ? 28 : 44} height={small ? 28 : 44}>
        <circle cx="14" cy="20" r="12" className="logo-ear" />
        <circle cx="50" cy="20" r="12" className="logo-ear" />
        <circle cx="32" cy="34" r="22" className="logo-face" />
        <ellipse cx="32" cy="40" rx="7" ry="9" className="logo-nose" />
        <circle cx="23" cy="30" r="3" className="logo-eye" />
        <circle cx="41" cy="30" r="3" className="logo-eye" />
      </svg>
      <span className="logo-word">Koala</span>
    </span>
  );
}
