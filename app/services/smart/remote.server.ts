import { z } from "zod";

/**
 * The optional smart-search provider: an OpenAI-compatible chat-completions API (OpenAI, Azure's compatible
 * endpoint, a local llama.cpp or vLLM server). It is given the scope's most used tags as candidates and asked for
 * the spec's `{description, tags[]}`; whatever it answers is mapped back onto the scope's tags by the caller.
 * Any failure (network, status, time-out, an answer that is not that JSON) throws: the caller falls back to the
 * local provider and says 'Failed to connect to server'.
 */
interface RemoteOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

const Answer = z.object({ description: z.string().max(2000).default(""), tags: z.array(z.string().max(200)).max(50) });
const Completion = z.object({ choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1) });

const MAX_CANDIDATES = 400;

export async function remoteTags(phrase: string, candidates: string[], opts: RemoteOptions): Promise<z.infer<typeof Answer>> {
  const response = await fetch(`${opts.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
    signal: AbortSignal.timeout(opts.timeoutMs),
    body: JSON.stringify({
      model: opts.model,
      temperature: 0,
      response_format: { type: "json_object" },
      messages: [
        {
          role: "system",
          content:
            "You help market researchers find images in their library. Turn the search phrase into the tags that " +
            'images showing it would carry. Answer only JSON: {"description": one sentence saying what you look for, ' +
            '"tags": up to 8 tags}. Choose tags only from the candidate list, exactly as written there.',
        },
        { role: "user", content: JSON.stringify({ phrase, candidates: candidates.slice(0, MAX_CANDIDATES) }) },
      ],
    }),
  });
  if (!response.ok) throw new Error(`smart-search provider answered ${response.status}`);
  const completion = Completion.parse(await response.json());
  return Answer.parse(JSON.parse(completion.choices[0]!.message.content));
}
