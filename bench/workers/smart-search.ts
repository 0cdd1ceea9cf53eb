/**
 * P5c, in a process of its own: times the local smart search (phrase → tags over the project's vocabulary, all three
 * stages, tag vectors from the database) against the keyword search of the same phrase (the grid loader: page of
 * 100 + count), phrase by phrase, interleaved in rounds, and the memory the smart search adds (RSS after the
 * vocabulary is read and before any smart search, against RSS after the rounds). Prints one JSON object.
 *
 * Input: argv[2] JSON { rounds, projectId, email } and the app's environment for the dataset.
 */
import { performance } from "node:perf_hooks";
import { config, loadConfig, setConfig } from "~/config.server";
import type { Actor } from "~/models/actor";
import { gridPage, gridTotal } from "~/models/grid.server";
import { projectScope, withFilter } from "~/models/scope.server";
import { findUserByEmail } from "~/models/users.server";
import { scopeVocabulary } from "~/models/vocabulary.server";
import { openDatabase } from "~/services/boot.server";
import { localTags } from "~/services/smart/local.server";
import { DIRECT, PARAPHRASES } from "../../tests/helpers/smart-phrases";
import { summarise, type Summary } from "../lib/stats";

const args = JSON.parse(process.argv[2] ?? "{}") as { rounds: number; projectId: number; email: string };
setConfig(loadConfig(process.env));
const connection = await openDatabase();
const user = await findUserByEmail(args.email);
if (!user) throw new Error(`No bench user ${args.email}`);
const actor: Actor = { id: user.id, role: user.role };
const phrases = [...DIRECT, ...PARAPHRASES].map(([p]) => p);

const project = await projectScope(actor, args.projectId);
const vocabularyStarted = performance.now();
const vocabulary = await scopeVocabulary(project);
const vocabularyMs = performance.now() - vocabularyStarted;
global.gc?.();
const rssBefore = process.memoryUsage().rss;

const smart = (phrase: string) => localTags(phrase, vocabulary, { embeddings: config().smartSearch.embeddings });
const keyword = async (phrase: string) => {
  const scope = withFilter(await projectScope(actor, args.projectId), new URLSearchParams({ q: phrase }));
  return Promise.all([gridPage(scope, { after: null, limit: 100 }), gridTotal(scope)]);
};
const time = async (work: () => Promise<unknown>) => {
  const t = performance.now();
  await work();
  return performance.now() - t;
};

// The first smart search that needs the encoder (a paraphrase: words left over) loads it and embeds (and stores)
// every tag: timed once, apart.
const firstMs = await time(() => smart(PARAPHRASES[0]![0]));
const paraphrases = new Set(PARAPHRASES.map(([p]) => p));
for (const phrase of phrases) await Promise.all([smart(phrase), keyword(phrase)]); // warm both
const rounds: { a: Summary; b: Summary; paraphrases: Summary }[] = [];
for (let r = 0; r < args.rounds; r++) {
  const sa: number[] = [];
  const sb: number[] = [];
  const sp: number[] = [];
  for (const phrase of phrases) {
    let ms: number;
    if (r % 2 === 0) {
      sa.push((ms = await time(() => smart(phrase))));
      sb.push(await time(() => keyword(phrase)));
    } else {
      sb.push(await time(() => keyword(phrase)));
      sa.push((ms = await time(() => smart(phrase))));
    }
    if (paraphrases.has(phrase)) sp.push(ms);
  }
  rounds.push({ a: summarise(sa), b: summarise(sb), paraphrases: summarise(sp) });
}
global.gc?.();
const rssAfter = process.memoryUsage().rss;
await connection.close();
process.stdout.write(
  `${JSON.stringify({ rounds, firstMs, vocabularyMs, vocabularySize: vocabulary.length, phrases: phrases.length, rssBeforeMb: rssBefore / 2 ** 20, rssAfterMb: rssAfter / 2 ** 20 })}\n`,
);
