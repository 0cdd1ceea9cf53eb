import { remember } from "~/lib/bounded-cache";
import { config } from "~/config.server";
import { fold } from "~/lib/keywords-query";
import { hasSmart, tagsOf } from "~/lib/smart-tags";
import { log } from "~/lib/log.server";
import type { GridScope } from "~/models/scope.server";
import { scopeVocabulary, type VocabularyTag } from "~/models/vocabulary.server";
import { describe, localTags, type Reason } from "./smart/local.server";
import { remoteTags } from "./smart/remote.server";

/**
 * Smart search (spec 1: POST /search/smart → {description, tags[]}): a phrase becomes tags of the scope's own
 * vocabulary, which the person sees as chips, edits, and the grid is found by (grid.server ranks by tags held).
 * Local and offline by default; an OpenAI-compatible service when configured, with the local answer as fallback.
 */
interface SmartAnswer {
  description: string;
  tags: string[];
  /** Why each tag was proposed (local provider); empty for a service's answer. */
  reasons: Reason[];
  /** The configured service could not be reached or answered nonsense ('Failed to connect to server'). */
  failed: boolean;
  /** The service was busy with other calls, so the local provider answered (not kept: the next search asks again). */
  busy?: boolean;
}

/**
 * Answers per vocabulary (a scope's, as read at one version) and phrase: the grid, its pages and the panel ask for
 * the same phrase in turn. They go with their vocabulary.
 */
const answers = new WeakMap<VocabularyTag[], Map<string, Promise<SmartAnswer>>>();
const MAX_PER_VOCABULARY = 200;

export async function smartAnswer(scope: GridScope, phrase: string): Promise<SmartAnswer> {
  const vocabulary = await scopeVocabulary(scope);
  let cached = answers.get(vocabulary);
  if (!cached) answers.set(vocabulary, (cached = new Map()));
  let answer = cached.get(phrase);
  if (!answer) {
    const kept = cached;
    answer = answerFor(vocabulary, phrase);
    // A failure is not kept: the next search asks the service again instead of saying it failed until the next edit.
    answer.then((a) => (a.failed || a.busy) && kept.delete(phrase)).catch(() => kept.delete(phrase));
    remember(kept, phrase, answer, MAX_PER_VOCABULARY);
  }
  return answer;
}

async function answerFor(vocabulary: VocabularyTag[], phrase: string): Promise<SmartAnswer> {
  const settings = config().smartSearch;
  const local = async () => {
    const reasons = await localTags(phrase, vocabulary, { embeddings: settings.embeddings });
    return { description: describe(phrase, reasons), tags: reasons.map((r) => r.tag), reasons };
  };
  if (settings.provider !== "openai") return { ...(await local()), failed: false };
  // At most a few calls to the service at once (each may cost money and seconds); beyond, the local answer.
  if (remoteCalls >= MAX_REMOTE_CALLS) return { ...(await local()), failed: false, busy: true };
  remoteCalls += 1;
  try {
    const answer = await remoteTags(
      phrase,
      vocabulary.map((t) => t.tag),
      settings,
    );
    // Only tags of the scope count (a chip must be able to match), in the scope's spelling, and no more than a URL
    // carries (tagsOf), so every page of the grid sees the same tags.
    const byKey = new Map(vocabulary.map((t) => [t.key, t.tag]));
    const tags = tagsOf(answer.tags.map((t) => byKey.get(fold(t).trim()) ?? "").join(","));
    return { description: answer.description, tags, reasons: [], failed: false };
  } catch (error) {
    log.warn("smart search: the configured service failed; the local answer is used", { error: (error as Error).message });
    return { ...(await local()), failed: true };
  } finally {
    remoteCalls -= 1;
  }
}
let remoteCalls = 0;
const MAX_REMOTE_CALLS = 4;

/** The scope with its smart search's tags: the phrase's, unless the URL already carries the tags as edited. */
export async function withSmartTags<S extends GridScope>(scope: S): Promise<S> {
  const filter = scope.filter;
  if (!filter?.smart || filter.tags !== undefined) return scope;
  return { ...scope, filter: { ...filter, tags: (await smartAnswer(scope, filter.smart)).tags } };
}

/** What the sidebar's smart panel shows: the phrase, its description and the tags in use; null without a search. */
export async function smartPanel(scope: GridScope) {
  const filter = scope.filter;
  if (!hasSmart(filter)) return null;
  const answer = filter?.smart ? await smartAnswer(scope, filter.smart) : null;
  return {
    phrase: filter?.smart ?? "",
    tags: filter?.tags ?? answer?.tags ?? [],
    description: answer?.description ?? "",
    edited: Boolean(answer && filter?.tags && filter.tags.join(",") !== answer.tags.join(",")),
    failed: answer?.failed ?? false,
  };
}
