import { getFormProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { redirect, type ActionFunctionArgs, type HeadersFunction, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { FormError, SubmitButton, TextareaField, Field, usePending, useSchemaForm } from "~/components/forms";
import { Keywords } from "~/components/image-panel";
import { SharedErrorBoundary, SharedShell } from "~/components/shared-shell";
import { HttpError } from "~/lib/errors";
import { page, readForm, refused } from "~/web/http.server";
import { resultOf } from "~/lib/form-answer";
import { ReviewSchema, VisitorNameSchema } from "~/lib/schemas";
import { sharedMediaUrl } from "~/lib/shared-media";
import { sharedScope, SHARED_HEADERS } from "~/routes/_shared-board+/shared-page.server";
import { imageAttributes } from "~/models/images.server";
import { sharedImage } from "~/models/share-access.server";
import { COMMENT_MAX, reviewImage, visitorReviews } from "~/models/share-reviews.server";
import { readVisitor, visitorCookie } from "~/web/share-visitor.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.image.title || "Image"} · ${data?.board.title ?? "Shared board"} | Koala` },
  { name: "robots", content: "noindex, nofollow" },
];

export const headers: HeadersFunction = ({ actionHeaders, loaderHeaders }) => ({
  ...SHARED_HEADERS,
  ...(actionHeaders.get("Set-Cookie") ? { "Set-Cookie": actionHeaders.get("Set-Cookie")! } : {}),
  ...(loaderHeaders.get("Set-Cookie") ? { "Set-Cookie": loaderHeaders.get("Set-Cookie")! } : {}),
});

/**
 * One image of a shared board: the preview, its metadata when the link shows it, the original when the link
 * allows downloads, and the review loop: the visitor names themselves once (a cookie of the link), then marks the
 * image Approved or Rejected and may leave a comment. Plain forms; no JavaScript needed.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await sharedScope(params.sharedUrl, context);
  const image = await sharedImage(scope, params.imageId);
  const visitor = await readVisitor(request, scope.link.id);
  const mine = visitor ? (await visitorReviews(scope, visitor.key, [image.id])).get(image.id) : undefined;
  const meta = scope.link.showMetadata;
  return {
    sharedUrl: params.sharedUrl!,
    board: { title: scope.board.title },
    link: { allowDownload: scope.link.allowDownload, showMetadata: meta },
    image: {
      id: image.id,
      title: meta ? image.title : "",
      description: meta ? image.description : "",
      ocr: meta ? image.ocr_text : "",
      keywords: meta ? (JSON.parse(image.keywords) as string[]) : [],
      preview: sharedMediaUrl(params.sharedUrl!, image.id, image.preview_key),
      original: scope.link.allowDownload ? `${sharedMediaUrl(params.sharedUrl!, image.id, image.storage_key)}?download=1` : null,
      width: image.width,
      height: image.height,
    },
    attributes: meta ? await imageAttributes(image.id) : [],
    visitor: visitor ? { name: visitor.name } : null,
    review: mine ?? null,
    commentMax: COMMENT_MAX,
  };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await sharedScope(params.sharedUrl, context);
  const image = await sharedImage(scope, params.imageId);
  const form = await readForm(request);
  if (form.get("intent") === "name") {
    const submission = parseWithZod(form, { schema: VisitorNameSchema });
    if (submission.status !== "success") return refused("name", submission.reply());
    // Back to the page (post/redirect/get): without JavaScript, its loader then reads the name from the new cookie.
    return redirect(`/shared-board/${params.sharedUrl}/image/${image.id}`, {
      headers: { "Set-Cookie": await visitorCookie(request, scope.link.id, submission.value.name) },
    });
  }
  const submission = parseWithZod(form, { schema: ReviewSchema });
  if (submission.status !== "success") return refused("review", submission.reply());
  const visitor = await readVisitor(request, scope.link.id);
  if (!visitor) return refused("review", submission.reply({ formErrors: ["Please enter your name first."] }));
  const { mark, comment } = submission.value;
  try {
    await reviewImage(
      scope,
      visitor,
      image.id,
      { mark: mark === undefined ? undefined : mark === "none" ? null : mark, comment },
      context.clientIp ?? null,
    );
  } catch (err) {
    if (!(err instanceof HttpError) || err.status !== 429) throw err;
    return refused("review", submission.reply({ formErrors: [err.message] }), 429);
  }
  return {
    intent: "review" as const,
    result: submission.reply({ resetForm: false }),
    saved: mark === "approved" ? "Approved" : mark === "rejected" ? "Rejected" : "Saved",
  };
});

export default function SharedImage() {
  const { sharedUrl, board, link, image, attributes, visitor, review, commentMax } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const back = `/shared-board/${sharedUrl}`;
  return (
    <SharedShell title={board.title}>
      <p>
        <Link to={back}>← All images</Link>
      </p>
      <div className="image-panel-body">
        <figure className="image-panel-figure">
          <img src={image.preview} alt={image.title || "Image"} width={image.width} height={image.height} />
        </figure>
        <div className="image-panel-meta">
          <h2>{image.title || "Image"}</h2>
          {image.original ? (
            <p>
              <a href={image.original} className="btn" download>
                Download
              </a>
            </p>
          ) : null}
          {link.showMetadata ? (
            <>
              {image.description ? <p>{image.description}</p> : null}
              <Keywords keywords={image.keywords} />
              {image.ocr ? (
                <>
                  <h3>OCR text</h3>
                  <p className="ocr">{image.ocr}</p>
                </>
              ) : null}
              {attributes.length ? (
                <>
                  <h3>Attributes</h3>
                  <table className="attributes">
                    <tbody>
                      {attributes.map((a) => (
                        <tr key={a.attributeId}>
                          <th scope="row">{a.name}</th>
                          <td>{a.value}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </>
              ) : null}
            </>
          ) : null}
          <section aria-labelledby="review-heading" className="review-box">
            <h3 id="review-heading">Your review</h3>
            {visitor ? (
              <ReviewForm
                visitor={visitor.name}
                review={review}
                saved={answer && "saved" in answer ? answer.saved : null}
                lastResult={resultOf(answer, "review")}
                commentMax={commentMax}
              />
            ) : (
              <NameForm lastResult={resultOf(answer, "name")} />
            )}
          </section>
        </div>
      </div>
    </SharedShell>
  );
}

type Reply = Parameters<typeof useSchemaForm>[1]["lastResult"];

function NameForm({ lastResult }: { lastResult: Reply }) {
  const pending = usePending();
  const [form, fields] = useSchemaForm(VisitorNameSchema, { id: "visitor-name", lastResult });
  return (
    <Form method="post" {...getFormProps(form)}>
      <p className="muted">To approve, reject or comment, tell the team who you are (asked once for this link).</p>
      <input type="hidden" name="intent" value="name" />
      <FormError id={form.errorId} errors={form.errors} />
      <Field label="Your name" field={fields.name} inputProps={{ maxLength: 60, autoComplete: "name" }} />
      <SubmitButton pending={pending} pendingText="Saving…">
        Continue
      </SubmitButton>
    </Form>
  );
}

function ReviewForm({
  visitor,
  review,
  saved,
  lastResult,
  commentMax,
}: {
  visitor: string;
  review: { mark: string | null; comment: string | null } | null;
  saved: string | null;
  lastResult: Reply;
  commentMax: number;
}) {
  const pending = usePending();
  const [form, fields] = useSchemaForm(ReviewSchema, { id: "review", lastResult, defaultValue: { comment: review?.comment ?? "" } });
  return (
    <Form method="post" {...getFormProps(form)}>
      <input type="hidden" name="intent" value="review" />
      <p className="muted">
        Reviewing as {visitor}.{" "}
        {review?.mark ? (
          <strong className={`review-mark review-${review.mark}`}>
            You marked it {review.mark === "approved" ? "Approved" : "Rejected"}
          </strong>
        ) : null}
      </p>
      <p role="status" className="review-saved">
        {saved ? `Review saved: ${saved}` : ""}
      </p>
      <FormError id={form.errorId} errors={form.errors} />
      <TextareaField
        label="Comment (optional)"
        field={fields.comment}
        hint={`Up to ${commentMax} characters.`}
        textareaProps={{ rows: 3, maxLength: commentMax }}
      />
      <div className="form-actions">
        <SubmitButton name="mark" value="approved" pending={pending} pendingText="Saving…">
          Approve
        </SubmitButton>
        <SubmitButton name="mark" value="rejected" className="btn btn-danger" pending={pending} pendingText="Saving…">
          Reject
        </SubmitButton>
        <button type="submit" className="btn">
          Save comment only
        </button>
      </div>
    </Form>
  );
}

export const ErrorBoundary = SharedErrorBoundary;
