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
 * /client/:id/duplicates: the project's possible duplicates in groups, each the first image of its kind in the project
 * and the uploads that looked like it, the group with the newest upload first, until someone decides: Keep both
 * (editors) takes an upload out of its group; deleting it does too, and deleting the first leaves the rest grouped.
 * Pages of 20 groups, keyset by a group's newest upload.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await projectScopeOf({ request, context }, params.id);
  const query = Query.catch({ after: null }).parse(Object.fromEntries(new URL(request.url).searchParams));
  const { groups, next } = await possibleDuplicates(scope, { after: query.after });
  const shown = (i: { id: number; title: string; thumbKey: string }) => ({ id: i.id, title: i.title, thumb: thumbUrl(i.id, i.thumbKey) });
  return {
    project: { id: scope.project.id, name: scope.project.name },
    canEdit: scope.can.edit,
    groups: groups.map((g) => ({ first: shown(g.first), copies: g.copies.map(shown), count: g.count })),
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
  const { project, groups, next, paged, canEdit } = useLoaderData<typeof loader>();
  return (
    <section aria-labelledby="duplicates-heading" className="duplicates-page">
      <p>
        <Link to={`/client/${project.id}`}>← {project.name}</Link>
      </p>
      <h1 id="duplicates-heading">Possible duplicates</h1>
      <p className="muted">
        Uploads that looked like an image already in the project, grouped with the first of their kind, until someone keeps both or deletes
        one.
      </p>
      {groups.length === 0 ? (
        <p>{paged ? "No more possible duplicates." : "No possible duplicates in this project."}</p>
      ) : (
        <ul className="duplicate-groups">
          {groups.map(({ first, copies, count }) => (
            <li key={first.id}>
              <h2 className="duplicate-group-heading">
                {first.title || "Untitled"} <span className="muted">#{first.id}</span>:{" "}
                {count === 1 ? "1 possible copy" : `${count} possible copies`}
                {count > copies.length ? <span className="muted"> (the newest {copies.length} shown)</span> : null}
              </h2>
              <ul className="duplicate-copies">
                <li>
                  <DuplicateImage image={first} label="First in the project" />
                </li>
                {copies.map((copy) => (
                  <li key={copy.id}>
                    <DuplicateImage image={copy} label="Looks like it" />
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
