import { mkdtempSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { createScheduler, createWorker, OEM, type Scheduler } from "tesseract.js";
import { log } from "~/lib/log.server";

/**
 * tesseract.js, offline: a bounded pool of its worker threads, made when the first image is read and let go after a
 * minute without work (each holds ~100 MB per language). Language data comes from the `@tesseract.js-data/<code>`
 * packages installed with the app, never from the network; nothing is cached to disk.
 */

const IDLE_MS = 60_000;
const require = createRequire(import.meta.url);

/** The directory of a language's trained data (the "best int" models: the accurate ones, in integer arithmetic). */
function languageDir(code: string): string {
  let pkg: string;
  try {
    pkg = require.resolve(`@tesseract.js-data/${code}/package.json`);
  } catch {
    throw new Error(`OCR_LANGUAGES names "${code}", but its data package @tesseract.js-data/${code} is not installed.`);
  }
  return path.join(path.dirname(pkg), "4.0.0_best_int");
}

/** Throws, naming the language, when one of `languages` has no installed data (checked at start). */
export function checkOcrLanguages(languages: string[]) {
  for (const code of languages) languageDir(code);
}

/**
 * One directory holding every language's data, as tesseract.js reads them: a language's own package directory, or for
 * several, a temporary directory of links to each (the packages keep one language each).
 */
function dataDirectory(languages: string[]): string {
  if (languages.length === 1) return languageDir(languages[0]!);
  const dir = mkdtempSync(path.join(tmpdir(), "koala-ocr-"));
  for (const code of languages)
    symlinkSync(path.join(languageDir(code), `${code}.traineddata.gz`), path.join(dir, `${code}.traineddata.gz`));
  return dir;
}

/** A line of text tesseract found, with its words and how sure it is of each (0–100). */
export interface OcrLine {
  text: string;
  confidence: number;
  words: { text: string; confidence: number }[];
}

/**
 * The worker thread's script: tesseract.js's own, at the lowest priority first (nice 19; on Linux a thread's own), so
 * that page requests sharing its core go first and a reading waits for a free moment instead.
 */
function niceWorkerScript(): URL {
  const script = path.join(path.dirname(require.resolve("tesseract.js/package.json")), "src/worker-script/node/index.js");
  const code = `import { createRequire } from "node:module"; import { setPriority } from "node:os";
try { setPriority(19); } catch {}
createRequire(${JSON.stringify(script)})(${JSON.stringify(script)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}

export interface OcrPool {
  /** The lines of text in an image file (PGM, PNG, JPEG, WebP…), read by the next free worker. */
  read(image: Buffer): Promise<OcrLine[]>;
  /** Lets every worker go (the pool may be used again afterwards: it starts them anew). */
  close(): Promise<void>;
}

export function createOcrPool(opts: { concurrency: number; languages: string[] }): OcrPool {
  const langPath = dataDirectory(opts.languages);
  let scheduler: Promise<Scheduler> | null = null;
  let idle: NodeJS.Timeout | undefined;
  let busy = 0;

  const start = async () => {
    const s = createScheduler();
    const workers = await Promise.all(
      Array.from({ length: opts.concurrency }, () =>
        createWorker(
          opts.languages,
          OEM.LSTM_ONLY,
          {
            langPath,
            workerPath: niceWorkerScript() as unknown as string,
            cacheMethod: "none",
            gzip: true,
            // A picture it cannot decode rejects its job; the caller reports it.
            errorHandler: () => {},
          },
          // Tesseract's own notes ("Image too small to scale!!") would go to the server's output, line by line.
          { debug_file: "/dev/null" } as Parameters<typeof createWorker>[3],
        ),
      ),
    );
    for (const w of workers) {
      // Previews carry no resolution tesseract believes; 300 dpi is the scale its models were trained at.
      await w.setParameters({ user_defined_dpi: "300" });
      s.addWorker(w);
    }
    log.info("OCR workers started", { workers: workers.length, languages: opts.languages.join("+") });
    return s;
  };

  return {
    async read(image) {
      clearTimeout(idle);
      busy += 1;
      try {
        const s = await (scheduler ??= start().catch((err: unknown) => {
          scheduler = null;
          throw err;
        }));
        const { data } = await s.addJob("recognize", image, {}, { text: false, blocks: true });
        return (data.blocks ?? []).flatMap((b) =>
          b.paragraphs.flatMap((p) =>
            p.lines.map((l) => ({
              text: l.text,
              confidence: l.confidence,
              words: l.words.map((w) => ({ text: w.text, confidence: w.confidence })),
            })),
          ),
        );
      } finally {
        busy -= 1;
        if (busy === 0) idle = setTimeout(() => void this.close(), IDLE_MS).unref();
      }
    },
    async close() {
      clearTimeout(idle);
      const s = scheduler;
      scheduler = null;
      if (s) await (await s).terminate();
    },
  };
}
