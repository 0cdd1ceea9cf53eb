import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { ImagePanel } from "~/components/image-panel";
import { NotFoundBoundary } from "~/components/not-found";
import { orNotFound } from "~/lib/grid.server";
import { safeRedirect } from "~/lib/redirect";
import { getImageDetail } from "~/models/images.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.image.title || "Image"} | Koala` }];

const Query = z.object({ v: z.coerce.number().int().positive().optional().catch(undefined), from: z.string().optional() });

/** The single image panel as a page (the grids open the same data in a modal with JavaScript). */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const actor = await requireActor(request);
  const query = Query.parse(Object.fromEntries(new URL(request.url).searchParams));
  const detail = await orNotFound(() => getImageDetail(actor, Number(params.id)));
  const back = safeRedirect(query.from, `/client/${detail.project.id}`);
  return {
    ...detail,
    shownVersion: query.v ?? detail.image.version,
    back,
    header: { title: detail.project.name, projectId: detail.project.id, projectName: detail.project.name, kind: "project" as const },
  };
}

export default function ImagePage() {
  const data = useLoaderData<typeof loader>();
  return (
    <div>
      <p>
        <Link to={data.back}>← Back</Link>
      </p>
      <h1 className="sr-only">Image</h1>
      <ImagePanel data={data} headingId="image-title" path={`/image/${data.image.id}`} />
    </div>
  );
}

export const ErrorBoundary = NotFoundBoundary;
