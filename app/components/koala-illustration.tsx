/**
 * The search results' illustration (spec 2: "It shows an illustration"): the logo's koala, larger, looking through a
 * magnifying glass. Drawn inline (no request, no third-party host); its colours follow the theme through the logo's
 * classes.
 */
export function KoalaIllustration() {
  return (
    <svg
      className="koala-illustration"
      viewBox="0 0 120 100"
      width="120"
      height="100"
      role="img"
      aria-label="A koala with a magnifying glass"
    >
      <circle cx="26" cy="30" r="18" className="logo-ear" />
      <circle cx="82" cy="30" r="18" className="logo-ear" />
      <circle cx="54" cy="52" r="34" className="logo-face" />
      <ellipse cx="54" cy="60" rx="10" ry="13" className="logo-nose" />
      <circle cx="40" cy="44" r="4" className="logo-eye" />
      <circle cx="68" cy="44" r="4" className="logo-eye" />
      <line x1="96" y1="84" x2="108" y2="95" className="koala-illustration-handle" />
      <circle cx="86" cy="72" r="15" className="koala-illustration-lens" />
    </svg>
  );
}
