import { Form, Link } from "@remix-run/react";
import { cameraName, takenIso, takenText } from "~/lib/capture";
import { mediaUrl } from "~/lib/media";
import { NoUserAttributes } from "./no-user-attributes";

export interface PanelData {
  image: {
    id: number;
    title: string;
    description: string;
    keywords: string[];
    ocr_text: string;
    /** 1: the OCR text was read from the picture by Koala. */
    ocr_by_machine: number;
    /** What the photo's EXIF said (0, "" and null: unknown; the position only where the project keeps it). */
    taken_at: number;
    camera_make: string;
    camera_model: string;
    gps_lat: number | null;
    gps_lon: number | null;
    storage_key: string;
    preview_key: string;
    original_name: string;
    width: number;
    height: number;
    version: number;
  };
  project: { id: number; name: string };
  attributes: { attributeId: number; name: string; type: number; value: string }[];
  projectHasUserAttributes: boolean;
  versions: {
    version: number;
    title: string;
    description: string;
    keywords: string[];
    ocrText: string;
    previewKey: string;
    changes: string[];
    changedAt: number;
    changedBy: string | null;
  }[];
  shownVersion: number;
  /** Editors see Edit and Delete. */
  canEdit?: boolean;
  /** Editors, OCR on, the field empty or the machine's: "Read text again". */
  canReadText?: boolean;
  /** Opened from a board the image is on: Remove from this board too. */
  board?: { path: string; title: string } | null;
  /** Opened from a board: what visitors of its share links said about the image (the client review loop). */
  reviews?: { visitorName: string; via: string; mark: "approved" | "rejected" | null; comment: string | null; updatedAt: number }[];
}

/** The single image panel: the image, its metadata, attributes and version history. Used by the page and the modal. */
export function ImagePanel({ data, headingId, path }: { data: PanelData; headingId: string; path: string }) {
  const { image, project, attributes, versions, shownVersion } = data;
  const shown = versions.find((v) => v.version === shownVersion) ?? versions[0];
  const old = shown && shown.version !== image.version;
  const view =
    old && shown
      ? { title: shown.title, keywords: shown.keywords, ocr: shown.ocrText, previewKey: shown.previewKey }
      : { title: image.title, keywords: image.keywords, ocr: image.ocr_text, previewKey: image.preview_key };
  const original = mediaUrl(image.id, image.storage_key);
  const userAttributes = attributes.filter((a) => a.type === 3);
  return (
    <div className="image-panel">
      {old ? (
        <div className="old-version-banner" role="status">
          <span>An Old Version of the image is being displayed</span>
          <Link to={path} className="btn">
            Back to latest version
          </Link>
        </div>
      ) : null}
      <div className="image-panel-body">
        <figure className="image-panel-figure">
          <img src={mediaUrl(image.id, view.previewKey)} alt={view.title || "Image"} width={image.width} height={image.height} />
        </figure>
        <div className="image-panel-meta">
          <h2 id={headingId}>{view.title || "Untitled"}</h2>
          <p className="muted">{project.name}</p>
          <div className="image-actions">
            <a href={mediaUrl(image.id, view.previewKey)} className="btn" target="_blank" rel="noreferrer">
              Enlarge
            </a>
            <a href={`${original}?download=1`} className="btn" download={image.original_name}>
              Download
            </a>
            <Form method="post" action={`/image/${image.id}/export`} className="inline-form">
              <button type="submit" className="btn">
                Export attributes by email
              </button>
            </Form>
            {data.canEdit ? (
              <>
                <Link to={`/image/${image.id}?edit`} className="btn">
                  Edit
                </Link>
                <Link to={`/image/${image.id}/pin?from=${encodeURIComponent(data.board?.path ?? `/client/${project.id}`)}`} className="btn">
                  Pin to a board
                </Link>
                {data.board ? (
                  <Link to={`${data.board.path}/remove/${image.id}`} className="btn btn-danger">
                    Remove from this board
                  </Link>
                ) : null}
                <Link to={`/image/${image.id}/delete`} className="btn btn-danger">
                  Delete
                </Link>
              </>
            ) : null}
          </div>
          <Keywords keywords={view.keywords} />
          <h3>OCR text</h3>
          <p className="ocr">{view.ocr || <span className="muted">No OCR text</span>}</p>
          {!old && image.ocr_text && image.ocr_by_machine ? <p className="muted ocr-source">Read from the picture by Koala.</p> : null}
          {!old && data.canReadText ? (
            <Form method="post" action={`/image/${image.id}/ocr`} className="inline-form">
              <button type="submit" className="btn">
                Read text again
              </button>
            </Form>
          ) : null}
          <CaptureDetails image={image} />
          <h3>Attributes</h3>
          {attributes.length ? (
            <table className="attributes">
              <thead>
                <tr>
                  <th scope="col">Attribute</th>
                  <th scope="col">Value</th>
                  {data.canEdit ? (
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {attributes.map((a) => (
                  <tr key={a.attributeId}>
                    <th scope="row">{a.name}</th>
                    <td>{a.value}</td>
                    {data.canEdit ? (
                      <td>
                        {a.type === 3 ? (
                          <Link
                            to={`/image/${image.id}/attributes/${a.attributeId}/remove`}
                            className="btn"
                            aria-label={`Remove ${a.name}`}
                          >
                            Remove
                          </Link>
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          {userAttributes.length === 0 && !data.projectHasUserAttributes ? (
            <NoUserAttributes projectId={project.id} />
          ) : data.canEdit ? (
            <p>
              <Link to={`/image/${image.id}/attributes`} className="btn">
                Assign attribute
              </Link>
            </p>
          ) : null}
          {data.reviews?.length ? <ClientReviews reviews={data.reviews} /> : null}
          <h3>Version history</h3>
          {versions.length > 1 ? (
            <Form method="get" action={path.split("?")[0]} className="version-form">
              <label htmlFor={`${headingId}-version`}>
                Version {shown?.version} of {image.version}
                {shown?.changedBy ? ` · ${shown.changedBy}` : ""}
                {shown ? ` · ${new Date(shown.changedAt).toISOString().slice(0, 10)}` : ""}
                {shown?.changes.length ? ` · ${shown.changes.join(", ")}` : ""}
              </label>
              <input
                id={`${headingId}-version`}
                type="range"
                name="v"
                min={1}
                max={image.version}
                defaultValue={shown?.version}
                onChange={(e) => e.currentTarget.form?.requestSubmit()}
              />
              <button type="submit" className="btn">
                Show version
              </button>
            </Form>
          ) : (
            <p className="muted">Only the original version exists.</p>
          )}
        </div>
      </div>
    </div>
  );
}

/** Client reviews from the board's share links: who (the name they gave, and whose link), what, and when. */
function ClientReviews({ reviews }: { reviews: NonNullable<PanelData["reviews"]> }) {
  return (
    <>
      <h3>Client reviews</h3>
      <ul className="review-list">
        {reviews.map((r, i) => (
          <li key={i}>
            <strong>{r.visitorName}</strong> <span className="muted">(link for {r.via})</span>{" "}
            {r.mark ? <span className={`review-mark review-${r.mark}`}>{r.mark === "approved" ? "Approved" : "Rejected"}</span> : null}{" "}
            <span className="muted">{new Date(r.updatedAt).toISOString().slice(0, 10)}</span>
            {r.comment ? <blockquote>{r.comment}</blockquote> : null}
          </li>
        ))}
      </ul>
    </>
  );
}

/** An image's keywords under their heading (the panel and a shared board's image page). */
export function Keywords({ keywords }: { keywords: string[] }) {
  return (
    <>
      <h3>Keywords</h3>
      {keywords.length ? (
        <ul className="keywords">
          {keywords.map((k) => (
            <li key={k}>{k}</li>
          ))}
        </ul>
      ) : (
        <p className="muted">No keywords</p>
      )}
    </>
  );
}

/** When, with what and (where the project keeps positions) where the photo was taken, as its EXIF said. */
function CaptureDetails({ image }: { image: PanelData["image"] }) {
  const taken = Number(image.taken_at);
  const camera = cameraName(image.camera_make, image.camera_model);
  const located = image.gps_lat !== null && image.gps_lon !== null;
  return (
    <>
      <h3>Photo details</h3>
      {taken || camera || located ? (
        <dl className="capture-details">
          {taken ? (
            <>
              <dt>Taken</dt>
              <dd>
                <time dateTime={takenIso(taken) ?? undefined}>{takenText(taken)}</time>
              </dd>
            </>
          ) : null}
          {camera ? (
            <>
              <dt>Camera</dt>
              <dd>{camera}</dd>
            </>
          ) : null}
          {located ? (
            <>
              <dt>Location</dt>
              <dd>
                {image.gps_lat!.toFixed(6)}, {image.gps_lon!.toFixed(6)}
              </dd>
            </>
          ) : null}
        </dl>
      ) : (
        <p className="muted">The file says nothing of when or how it was taken.</p>
      )}
    </>
  );
}
