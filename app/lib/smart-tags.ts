/**
 * The smart search's tags as the URL and the tag field carry them: one comma-separated text ("soda, grocery aisle"),
 * as keywords are typed everywhere else. Shared by the server and the chips.
 */
export const MAX_TAGS = 16;
export const MAX_TAG_LENGTH = 40;

/**
 * Tags from their text: trimmed, inner spaces collapsed, each once (any case), capped; empty ones and single
 * characters dropped (a keyword has at least 2, and a one-letter tag would only make the index list every "a").
 */
export function tagsOf(raw: string | null | undefined): string[] {
  const seen = new Set<string>();
  const tags: string[] = [];
  for (const part of (raw ?? "").slice(0, MAX_TAGS * (MAX_TAG_LENGTH + 2)).split(",")) {
    const tag = part.replace(/\s+/g, " ").trim().slice(0, MAX_TAG_LENGTH).trim();
    if (tag.length < 2 || seen.has(tag.toLowerCase())) continue;
    seen.add(tag.toLowerCase());
    tags.push(tag);
    if (tags.length === MAX_TAGS) break;
  }
  return tags;
}

/** Whether a filter holds a smart search (a phrase, or tags the person kept or typed). */
export const hasSmart = (filter: { smart?: string; tags?: string[] } | undefined) => Boolean(filter?.smart || filter?.tags);
