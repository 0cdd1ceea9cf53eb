import { useLocation, useNavigation } from "@remix-run/react";
import { useEffect, useState } from "react";
import { Logo } from "./logo";

/** The spec's words, one every 2 s, in this order. */
export const PROGRESS_WORDS = ["Thinking", "Searching", "Compiling", "Analyzing", "Retrieving", "Indexing", "Filtering", "Sorting"];

/**
 * The search-progress screen (spec 1), shown only while a cross-project search is actually loading: it covers the
 * page from the moment the person asks until the result is there, whether that takes 20 ms (then it never
 * flickers in: it waits 300 ms before showing) or several seconds. See decision 0012.
 */
export function SearchProgress() {
  const navigation = useNavigation();
  const here = useLocation().pathname;
  const path = navigation.location?.pathname ?? "";
  // A new search (not paging through a result, not reloading it).
  const searching = navigation.state === "loading" && path !== here && (path.startsWith("/search/") || path.startsWith("/result/"));
  const [shown, setShown] = useState(false);
  const [word, setWord] = useState(0);
  useEffect(() => {
    if (!searching) {
      setShown(false);
      setWord(0);
      return;
    }
    const show = setTimeout(() => setShown(true), 300);
    const tick = setInterval(() => setWord((w) => (w + 1) % PROGRESS_WORDS.length), 2000);
    return () => {
      clearTimeout(show);
      clearInterval(tick);
    };
  }, [searching]);
  if (!searching || !shown) return null;
  return (
    <div className="search-progress" role="status" aria-live="polite">
      <div className="search-progress-koala">
        <Logo />
      </div>
      <p className="search-progress-word">{PROGRESS_WORDS[word]}…</p>
    </div>
  );
}
