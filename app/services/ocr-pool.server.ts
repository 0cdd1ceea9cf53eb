import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { createScheduler, createWorker, OEM, type Scheduler, type Worker } from "tesseract.js";
import { ownArrayBuffer } from "~/lib/buffers.server";
import { limiter } from "~/lib/limiter";
import { log } from "~/lib/log.server";

/**
 * tesseract.js, offline: a bounded pool of its worker threads, made when the first image is read and let go after a
 * minute without work (each holds ~100 MB per language). Language data comes from the `@tesseract.js-data/<code>`
 * packages installed with the app, never from the network; nothing is cached to disk.
 */

const IDLE_MS = 60_000;
/** tesseract.js never settles a worker whose data failed to load, nor a reading whose thread died: these bound both. */
const START_MS = 60_000;
const READ_MS = 120_000;
const require = createRequire(import.meta.url);

/** A language's trained data (the "best int" models: the accurate ones, in integer arithmetic). */
function languageFile(code: string): string {
  let pkg: string;
  try {
    pkg = require.resolve(`@tesseract.js-data/${code}/package.json`);
  } catch {
    throw new Error(`OCR_LANGUAGES names "${code}", but its data package @tesseract.js-data/${code} is not installed.`);
  }
  const file = path.join(path.dirname(pkg), "4.0.0_best_int", `${code}.traineddata.gz`);
  if (!existsSync(file)) throw new Error(`OCR_LANGUAGES names "${code}", but ${file} is missing from its data package.`);
  return file;
}

/** tesseract.js's own script for its worker threads (an internal path of the package: checked at start). */
function tesseractScript(): string {
  const script = path.join(path.dirname(require.resolve("tesseract.js/package.json")), "src/worker-script/node/index.js");
  if (!existsSync(script)) throw new Error(`tesseract.js's worker script is not at ${script}: OCR cannot start.`);
  return script;
}

/** Throws, saying what is missing, when OCR could not start: a language's data, or tesseract.js's worker script. */
export function checkOcr(languages: string[]) {
  for (const code of languages) languageFile(code);
  tesseractScript();
}

/**
 * A directory holding every language's data, as tesseract.js reads them (the packages keep one language each): the
 * package's own for one language; for several, links made anew for each start (a temporary directory may be swept).
 */
function dataDirectory(languages: string[]): { dir: string; remove(): void } {
  if (languages.length === 1) return { dir: path.dirname(languageFile(languages[0]!)), remove() {} };
  const dir = mkdtempSync(path.join(tmpdir(), "koala-ocr-"));
  for (const code of languages) symlinkSync(languageFile(code), path.join(dir, `${code}.traineddata.gz`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The worker thread's script: tesseract.js's own, run at the lowest priority (nice 19; on Linux a thread's own), so
 * that page requests sharing its core go first. An exception the script does not catch stays in the thread (its
 * reading then times out) instead of reaching the server as an unhandled 'error' event, which would stop it.
 */
function workerScript(): URL {
  const script = tesseractScript();
  const code = `import { createRequire } from "node:module"; import { setPriority } from "node:os";
try { setPriority(19); } catch {}
process.on("uncaughtException", () => {});
createRequire(${JSON.stringify(script)})(${JSON.stringify(script)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}

/** A line of text tesseract found, with its words and how sure it is of each (0–100). */
export interface OcrLine {
  text: string;
  confidence: number;
  words: { text: string; confidence: number }[];
}

/**
 * The picture as tesseract.js takes it without a copy of its own: it copies a Buffer into a new Uint8Array before
 * posting it to the worker (which copies it again), but only views an ArrayBuffer. Outside its typings, so the OCR
 * tests, which read real pictures through here, are what says it still works.
 */
const uncopied = (image: Buffer) => (ownArrayBuffer(image) ?? image) as Buffer;

export interface OcrPool {
  /** The lines of text in an image file (PGM, PNG, JPEG, WebP…), read by the next free worker. */
  read(image: Buffer): Promise<OcrLine[]>;
  /** Lets every worker go (the pool may be used again afterwards: it starts them anew). */
  close(): Promise<void>;
}

/** A started pool: `closed` rejects, failing the readings still on it, when it is let go. */
interface Started {
  scheduler: Scheduler;
  remove(): void;
  closed: Promise<never>;
  shut(reason: Error): void;
}

/** `work`, or an error naming `what` once `ms` have passed (the work itself is left to the caller to stop). */
function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`OCR: ${what} took longer than ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export function createOcrPool(opts: { concurrency: number; languages: string[] }): OcrPool {
  let pool: Promise<Started> | null = null;
  let idle: NodeJS.Timeout | undefined;
  let busy = 0;
  const turn = limiter(opts.concurrency);

  const start = async () => {
    const data = dataDirectory(opts.languages);
    const made = await Promise.allSettled(
      Array.from({ length: opts.concurrency }, () =>
        within(
          createWorker(
            opts.languages,
            OEM.LSTM_ONLY,
            {
              langPath: data.dir,
              workerPath: workerScript() as unknown as string,
              cacheMethod: "none",
              gzip: true,
              // A picture it cannot decode rejects its job; the caller reports it.
              errorHandler: () => {},
            },
            // Tesseract's own notes ("Image too small to scale!!") would go to the server's output, line by line.
            { debug_file: "/dev/null" } as Parameters<typeof createWorker>[3],
          ),
          START_MS,
          "starting a worker",
        ),
      ),
    );
    const workers = made.flatMap((m) => (m.status === "fulfilled" ? [m.value] : []));
    const failed = made.find((m): m is PromiseRejectedResult => m.status === "rejected");
    if (failed) {
      // None half-made is kept: the next reading starts the pool anew.
      await Promise.all(workers.map((w: Worker) => w.terminate().catch(() => {})));
      data.remove();
      throw failed.reason instanceof Error ? failed.reason : new Error(`OCR: a worker did not start (${String(failed.reason)})`);
    }
    const scheduler = createScheduler();
    for (const w of workers) {
      // Previews carry no resolution tesseract believes; 300 dpi is the scale its models were trained at.
      await w.setParameters({ user_defined_dpi: "300" });
      scheduler.addWorker(w);
    }
    log.info("OCR workers started", { workers: workers.length, languages: opts.languages.join("+") });
    let shut: (reason: Error) => void = () => {};
    const closed = new Promise<never>((_, reject) => (shut = reject));
    closed.catch(() => {});
    return { scheduler, remove: data.remove, closed, shut };
  };

  /**
   * Lets the workers go (`only`: if that pool is still the current one). tesseract.js never settles a reading on a
   * worker it terminates, so readings still on them are failed here at once.
   */
  const close = async (only?: Promise<Started>) => {
    if (only && only !== pool) return;
    clearTimeout(idle);
    const current = pool;
    pool = null;
    const started = await current?.catch(() => null);
    if (!started) return;
    started.shut(new Error("OCR: the workers were let go during the reading"));
    await started.scheduler.terminate().catch(() => {});
    started.remove();
  };

  return {
    async read(image) {
      clearTimeout(idle);
      busy += 1;
      try {
        // A reading waits for a free worker here, not in tesseract's queue, so that its time limit counts the reading
        // alone (a runner takes one job more than there are workers: services/ocr.server.ts).
        const { data } = await turn(async () => {
          const current = (pool ??= start().catch((err: unknown) => {
            pool = null;
            throw err;
          }));
          const { scheduler, closed } = await current;
          try {
            return await within(
              Promise.race([scheduler.addJob("recognize", uncopied(image), {}, { text: false, blocks: true }), closed]),
              READ_MS,
              "a reading",
            );
          } catch (err) {
            // A reading that never ends holds its thread: this pool's workers go, before the next reading's turn, so
            // that it starts a pool afresh.
            if (err instanceof Error && err.message.startsWith("OCR: a reading took longer")) await close(current);
            throw err;
          }
        });
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
        if (busy === 0 && pool) idle = setTimeout(() => void close(), IDLE_MS).unref();
      }
    },
    close: () => close(),
  };
}
