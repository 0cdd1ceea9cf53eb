import { Link, useNavigate } from "@remix-run/react";
import { useRef, useState, type FormEvent } from "react";
import { ACCEPT, MAX_BATCH, UPLOAD_CONCURRENCY, UPLOAD_ERRORS, uploadUrl } from "~/lib/uploads";

interface Item {
  id: string;
  file: File;
  loaded: number;
  status: "waiting" | "uploading" | "registering" | "done" | "failed";
  imageId?: number;
  /** Set once the file's bytes are stored: a retry then only registers again, under the same key (same image). */
  storedKey?: string;
  error?: string;
  /** Whether trying again can help (a network or server failure), as opposed to a file the server refused. */
  retry?: boolean;
}

/**
 * A step that failed. `retry`: the failure was the network's or the server's (the spec's step message, and a
 * Retry button); otherwise the file itself was refused and the message says what is wrong with it.
 */
class StepFailed extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

/** The server's refusal of this file (a 4xx with a reason), or the step's own message with a Retry for anything else. */
async function failure(response: Response | XMLHttpRequest | null, stepMessage: string): Promise<StepFailed> {
  const status = response?.status ?? 0;
  const reason = response && status >= 400 && status < 500 && status !== 429 && status !== 403 ? await errorText(response) : undefined;
  return reason ? new StepFailed(reason, false) : new StepFailed(stepMessage, true);
}

async function errorText(response: Response | XMLHttpRequest): Promise<string | undefined> {
  const text = response instanceof Response ? await response.text().catch(() => "") : String(response.responseText ?? "");
  try {
    return (JSON.parse(text) as { error?: string }).error;
  } catch {
    return text && text.length < 200 && !text.startsWith("<") ? text : undefined;
  }
}

const postJson = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify(body) });

/** PUT with XMLHttpRequest: fetch reports no upload progress. */
function put(url: string, file: File, onProgress: (loaded: number) => void) {
  return new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    if (file.type) xhr.setRequestHeader("Content-Type", file.type);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = async () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(await failure(xhr, UPLOAD_ERRORS.put)));
    xhr.onerror = () => reject(new StepFailed(UPLOAD_ERRORS.put, true));
    xhr.send(file);
  });
}

/** The spec's three steps for one file: signed URL, PUT, register. Any failure stops this file only. */
async function uploadOne(
  projectId: number,
  item: Item,
  onProgress: (loaded: number) => void,
  onStored: (key: string) => void,
): Promise<number> {
  let key = item.storedKey;
  if (!key) {
    const signed = await postJson("/api/uploads", { clientID: projectId, fileName: item.file.name, fileSize: item.file.size }).catch(
      () => null,
    );
    const grant = signed?.ok ? ((await signed.json().catch(() => null)) as { uploadUrl?: string; key?: string } | null) : null;
    if (!grant?.key || !grant.uploadUrl) throw await failure(signed, UPLOAD_ERRORS.sign);
    await put(grant.uploadUrl, item.file, onProgress);
    key = grant.key;
    onStored(key);
  }
  const registered = await postJson("/api/images", {
    clientID: projectId,
    newImage: { imgURL: key, imgOrgName: item.file.name, imgType: item.file.type, imgTags: [""], imgORC: "", imgDesc: "", imgTitle: "" },
  }).catch(() => null);
  const body = registered?.ok ? ((await registered.json().catch(() => null)) as { insertID?: number } | null) : null;
  if (!body?.insertID) throw await failure(registered, UPLOAD_ERRORS.register);
  return body.insertID;
}

/**
 * The upload form. Without JavaScript it is a plain multipart form the server runs the pipeline for. With
 * JavaScript the browser runs it: a few files at a time, a progress bar per file and overall, retry per file,
 * then on to Edit Image (one file) or Multiple Uploaded Images (several).
 */
export function UploadForm({ projectId, maxBytes, error }: { projectId: number; maxBytes: number; error?: string | null }) {
  const navigate = useNavigate();
  const input = useRef<HTMLInputElement>(null);
  const [items, setItems] = useState<Item[]>([]);
  const [running, setRunning] = useState(false);
  const [message, setMessage] = useState(error ?? "");
  const itemsRef = useRef<Item[]>([]);

  const update = (id: string, patch: Partial<Item>) => {
    itemsRef.current = itemsRef.current.map((i) => (i.id === id ? { ...i, ...patch } : i));
    setItems(itemsRef.current);
  };

  async function run(queue: Item[]) {
    setRunning(true);
    const work = [...queue];
    const worker = async () => {
      for (let item = work.shift(); item; item = work.shift()) {
        const id = item.id;
        const refused =
          item.file.size === 0
            ? "The file is empty."
            : item.file.size > maxBytes
              ? `The file is larger than ${Math.round(maxBytes / 1024 / 1024)} MB.`
              : null;
        if (refused) {
          update(id, { status: "failed", error: refused, retry: false });
          continue;
        }
        update(id, {
          status: item.storedKey ? "registering" : "uploading",
          loaded: item.storedKey ? item.file.size : 0,
          error: undefined,
          retry: undefined,
        });
        try {
          const imageId = await uploadOne(
            projectId,
            item,
            (loaded) => update(id, { loaded }),
            (storedKey) => update(id, { status: "registering", loaded: item!.file.size, storedKey }),
          );
          update(id, { status: "done", imageId });
        } catch (err) {
          const failed = err instanceof StepFailed ? err : new StepFailed(UPLOAD_ERRORS.register, true);
          // A file the server refused is deleted there: nothing of it is kept to retry.
          update(id, { status: "failed", error: failed.message, retry: failed.retry, ...(failed.retry ? {} : { storedKey: undefined }) });
        }
      }
    };
    await Promise.all(Array.from({ length: UPLOAD_CONCURRENCY }, worker));
    setRunning(false);
    const all = itemsRef.current;
    const done = all.flatMap((i) => (i.imageId ? [i.imageId] : []));
    if (done.length && done.length === all.length) navigate(uploadUrl(projectId, done.length === 1 ? "edit" : "multiple", done));
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const files = [...(input.current?.files ?? [])];
    if (!files.length) {
      setMessage("Choose at least one image to upload.");
      return;
    }
    if (files.length > MAX_BATCH) {
      setMessage(`Choose at most ${MAX_BATCH} images at a time.`);
      return;
    }
    setMessage("");
    const fresh = files.map((file, n) => ({ id: `${Date.now()}-${n}`, file, loaded: 0, status: "waiting" as const }));
    itemsRef.current = [...itemsRef.current.filter((i) => i.status === "done"), ...fresh];
    setItems(itemsRef.current);
    if (input.current) input.current.value = "";
    void run(fresh);
  }

  const total = items.reduce((sum, i) => sum + i.file.size, 0);
  const loaded = items.reduce((sum, i) => sum + (i.status === "done" || i.status === "registering" ? i.file.size : i.loaded), 0);
  const done = items.filter((i) => i.status === "done");
  const failed = items.filter((i) => i.status === "failed");

  return (
    <div className="uploader">
      <form method="post" encType="multipart/form-data" action={`/upload/${projectId}/files`} onSubmit={onSubmit} className="upload-form">
        <label htmlFor="upload-files">Images to upload</label>
        <input
          ref={input}
          id="upload-files"
          type="file"
          name="files"
          accept={ACCEPT}
          multiple
          aria-describedby="upload-hint upload-message"
        />
        <p id="upload-hint" className="muted field-hint">
          JPEG, PNG, WebP, GIF, TIFF, AVIF or HEIF, up to {Math.round(maxBytes / 1024 / 1024)} MB each.
        </p>
        <p id="upload-message" className="field-error" role="alert">
          {message}
        </p>
        <button type="submit" className="btn btn-primary" disabled={running}>
          {running ? "Uploading…" : "Upload"}
        </button>
      </form>
      {items.length ? (
        <section aria-labelledby="upload-progress-heading" className="upload-progress">
          <h2 id="upload-progress-heading">{running ? "Submitting" : "Uploads"}</h2>
          <label htmlFor="upload-overall" aria-live="polite">
            {done.length} of {items.length} uploaded{failed.length ? `, ${failed.length} failed` : ""}
          </label>
          <progress id="upload-overall" max={total || 1} value={loaded} />
          <ul className="upload-items">
            {items.map((item) => (
              <li key={item.id} className={`upload-item upload-${item.status}`}>
                <span className="upload-name">{item.file.name}</span>
                <progress
                  max={item.file.size || 1}
                  value={item.status === "done" ? item.file.size : item.loaded}
                  aria-label={`${item.file.name} progress`}
                />
                <span className="upload-status">{statusText(item)}</span>
                {item.status === "failed" ? (
                  <>
                    <span className="field-error">{item.error}</span>
                    {item.retry ? (
                      <button type="button" className="btn" disabled={running} onClick={() => void run([item])}>
                        Retry
                      </button>
                    ) : null}
                  </>
                ) : null}
              </li>
            ))}
          </ul>
          {!running && done.length && failed.length ? (
            <Link
              className="btn btn-primary"
              to={uploadUrl(
                projectId,
                done.length === 1 ? "edit" : "multiple",
                done.map((i) => i.imageId!),
              )}
            >
              Continue with {done.length} uploaded {done.length === 1 ? "image" : "images"}
            </Link>
          ) : null}
        </section>
      ) : null}
    </div>
  );
}

function statusText(item: Item) {
  switch (item.status) {
    case "waiting":
      return "Waiting";
    case "uploading":
      return "Uploading";
    case "registering":
      return "Processing";
    case "done":
      return "Uploaded";
    case "failed":
      return "Failed";
  }
}

export interface UploadResultRow {
  name: string;
  id?: number;
  error?: string;
}

/** What the server made of a form upload without JavaScript, when some file failed. */
export function UploadResults({ projectId, results }: { projectId: number; results: UploadResultRow[] }) {
  const done = results.flatMap((r) => (r.id ? [r.id] : []));
  return (
    <section aria-labelledby="upload-results-heading" className="upload-progress" role="alert">
      <h2 id="upload-results-heading">
        {done.length} of {results.length} uploaded
      </h2>
      <ul className="upload-items">
        {results.map((r, n) => (
          <li key={n} className={`upload-item ${r.id ? "upload-done" : "upload-failed"}`}>
            <span className="upload-name">{r.name}</span>
            {r.id ? <span className="upload-status">Uploaded</span> : <span className="field-error">{r.error}</span>}
          </li>
        ))}
      </ul>
      {done.length ? (
        <Link className="btn btn-primary" to={uploadUrl(projectId, done.length === 1 ? "edit" : "multiple", done)}>
          Continue with {done.length} uploaded {done.length === 1 ? "image" : "images"}
        </Link>
      ) : null}
    </section>
  );
}

/**
 * The upload page's first view (spec 2: view `upload`): the form, and what the server made of a form upload
 * without JavaScript when it comes back here (results per file, or why the whole post was refused).
 */
export function UploadStart({
  project,
  maxBytes,
  results,
  error,
}: {
  project: { id: number; name: string; canManage: boolean };
  maxBytes: number;
  results?: UploadResultRow[] | null;
  error?: string | null;
}) {
  return (
    <section className="upload-page" aria-labelledby="upload-heading">
      <h1 id="upload-heading">Upload images to {project.name}</h1>
      <nav className="upload-tiles" aria-label="Project tools">
        <Link to={`/upload/${project.id}/attributes`} className="tile">
          Manage Attributes
        </Link>
        {/* Re-import rebuilds the whole project: managers only (the page is a 404 to anyone else). */}
        {project.canManage ? (
          <Link to={`/upload/${project.id}/reimport`} className="tile">
            Re-import
          </Link>
        ) : null}
        <Link to={`/upload/${project.id}/import`} className="tile">
          Import Attributes CSV
        </Link>
      </nav>
      {results?.length ? <UploadResults projectId={project.id} results={results} /> : null}
      <UploadForm key={error ?? ""} projectId={project.id} maxBytes={maxBytes} error={error} />
    </section>
  );
}
