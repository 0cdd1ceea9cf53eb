import type { ActionFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { InvalidError } from "~/lib/errors";
import { api, readJson } from "~/web/http.server";
import { sharedMediaUrl } from "~/lib/shared-media";
import { sharedScope, SHARED_HEADERS } from "~/routes/_shared-board+/shared-page.server";
import { imageAttributes } from "~/models/images.server";
import { sharedImage } from "~/models/share-access.server";

const Body = z.object({
  boardId: z.string().min(1).max(64),
  imageID: z.coerce.number().int().positive(),
  sharedBoardToken: z.string().min(1).max(200),
});

/** The spec's POST /shared/board/image/get `{ boardId, imageID, sharedBoardToken }`: one image, as the link allows it. */
export const action = api(async ({ request, context }: ActionFunctionArgs) => {
  const parsed = Body.safeParse(await readJson(request));
  if (!parsed.success) throw new InvalidError("Data format error");
  const sharedUrl = `${parsed.data.boardId}:${parsed.data.sharedBoardToken}`;
  const scope = await sharedScope(sharedUrl, context);
  const image = await sharedImage(scope, parsed.data.imageID);
  const meta = scope.link.showMetadata;
  return Response.json(
    {
      image: {
        id: image.id,
        title: meta ? image.title : "",
        description: meta ? image.description : "",
        keywords: meta ? (JSON.parse(image.keywords) as string[]) : [],
        ocr: meta ? image.ocr_text : "",
        attributes: meta ? (await imageAttributes(image.id)).map((a) => ({ name: a.name, value: a.value })) : [],
        source: sharedMediaUrl(sharedUrl, image.id, image.thumb_key),
        thumbnail: sharedMediaUrl(sharedUrl, image.id, image.preview_key),
        ...(scope.link.allowDownload ? { download: `${sharedMediaUrl(sharedUrl, image.id, image.storage_key)}?download=1` } : {}),
      },
    },
    { headers: SHARED_HEADERS },
  );
});
