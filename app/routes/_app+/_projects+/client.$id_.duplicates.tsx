import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { IntentButton } from "~/components/forms";
import { InvalidError, NotFoundError } from "~/lib/errors";
import { parseId } from "~/lib/ids";
import { formId } from "~/lib/schemas";
import { keepBoth, possibleDuplicates } from "~/models/duplicates.server";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { thumbUrl } from "~/web/media-links.server";
import { projectScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Possible duplicates · ${data?.project.name ?? "Project"} | Koala` },
];

const Query = z.object({
  after: z
    .string()
    .optional()
    .transform((v) => (v ? parseId(v) : null)),
});

/** The page's one answer: Keep both, for an upload of the list. */
const KeepBoth = z.object({ intent: z.literal("keep-both"), image: formId });

/**
 * /client/:id/duplicates: the project's possible duplicates, each upload beside the image it looked like when it came
 * in, newest first, until someone decides: Keep both (editors) takes the pair off the list; deleting either image
 * does too. Pages of 30, keyset by the copy's id.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await projectScopeOf({ request, context }, params.id);
  const query = Query.catch({ after: null }).parse(Object.fromEntries(new URL(request.url).searchParams));
  const { pairs, next } = await possibleDuplicates(scope, { after: query.after });
  const shown = (i: { id: number; title: string; thumbKey: string }) => ({ id: i.id, title: i.title, thumb: thumbUrl(i.id, i.thumbKey) });
  return {
    project: { id: scope.project.id, name: scope.project.name },
    canEdit: scope.can.edit,
    pairs: pairs.map((p) => ({ copy: shown(p.copy), original: shown(p.original) })),
    next,
    paged: query.after !== null,
    header: headerOf(scope),
  };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await projectScopeOf({ request, context }, params.id, { need: "write" });
  const form = KeepBoth.safeParse(Object.fromEntries(await readForm(request)));
  if (!form.success) throw new InvalidError();
  // Another project's image, or a pair someone already decided on: nothing to keep.
  if (!(await keepBoth(scope, form.data.image))) throw new NotFoundError("Image not found");
  return redirectWithToast(request, `/client/${scope.project.id}/duplicates`, { kind: "success", title: "Both images kept" });
});

export default function PossibleDuplicates() {
  const { project, pairs, next, paged, canEdit } = useLoaderData<typeof loader>();
  return (
    <section aria-labelledby="duplicates-heading" className="duplicates-page">
      <p>
        <Link to={`/client/${project.id}`}>← {project.name}</Link>
      </p>
      <h1 id="duplicates-heading">Possible duplicates</h1>
      <p className="muted">
        Each upload that looked like an image already in the project, beside it, until someone keeps both or deletes one.
      </p>
      {pairs.length === 0 ? (
        <p>{paged ? "No more possible duplicates." : "No possible duplicates in this project."}</p>
      ) : (
        <ul className="duplicate-pairs">
          {pairs.map(({ copy, original }) => (
            <li key={copy.id}>
              <DuplicateImage image={copy} label="Uploaded" />
              <DuplicateImage image={original} label="Looks like" />
              {canEdit ? (
                <div className="form-actions">
                  <IntentButton intent="keep-both" fields={{ image: String(copy.id) }}>
                    Keep both<span className="sr-only"> ({copy.title || `image ${copy.id}`})</span>
                  </IntentButton>
                  <Link to={`/image/${copy.id}/delete`} className="btn btn-danger">
                    Delete the upload<span className="sr-only"> ({copy.title || `image ${copy.id}`})</span>
                  </Link>
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {next ? (
        <Link to={`/client/${project.id}/duplicates?after=${next}`} className="btn">
          Older possible duplicates
        </Link>
      ) : null}
    </section>
  );
}

function DuplicateImage({ image, label }: { image: { id: number; title: string; thumb: string }; label: string }) {
  return (
    <figure>
      <img src={image.thumb} alt="" width={240} height={180} />
      <figcaption>
        {label}: <Link to={`/image/${image.id}`}>{image.title || "Untitled"}</Link> <span className="muted">#{image.id}</span>
      </figcaption>
    </figure>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
