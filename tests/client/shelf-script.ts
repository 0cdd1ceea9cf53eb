import createClient from "openapi-fetch";
import type { paths } from "./koala-api";

/**
 * What a research team's script does with the API, written the way its author would: against the client that
 * openapi-fetch makes from the generated types, with a token and nothing else. Upload three shelf photos (signed
 * URL, send, register), tag them, find them again by a keyword, put them on a new board, share the board, read
 * the share link as the client would, and fetch one photo back. Every step's refusal throws with the problem's detail.
 */
export interface ScriptResult {
  imageIds: number[];
  found: number[];
  boardId: string;
  shareUrl: string;
  sharedPage: string;
  /** The first photo's original, as the API sends it back. */
  original: Uint8Array;
}

export async function shelfScript(base: string, token: string, projectId: number, photos: Uint8Array[]): Promise<ScriptResult> {
  const api = createClient<paths>({ baseUrl: `${base}/api/v1`, headers: { Authorization: `Bearer ${token}` } });
  const must = <T>(answer: { data?: T; error?: unknown; response: Response }, step: string): T => {
    if (answer.data === undefined) throw new Error(`${step}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
    return answer.data;
  };

  const imageIds: number[] = [];
  for (const [i, photo] of photos.entries()) {
    const signed = must(
      await api.POST("/projects/{projectId}/uploads", {
        params: { path: { projectId } },
        body: { fileName: `shelf-${i + 1}.jpg`, fileSize: photo.byteLength },
      }),
      "sign",
    );
    const sent = await fetch(signed.uploadUrl, { method: "PUT", body: new Uint8Array(photo) });
    if (!sent.ok) throw new Error(`send: ${sent.status}`);
    const image = must(
      await api.POST("/projects/{projectId}/images", {
        params: { path: { projectId } },
        body: { key: signed.key, title: `Shelf photo ${i + 1}`, description: "Store 14, aisle 3" },
      }),
      "register",
    );
    imageIds.push(image.id);
  }

  for (const id of imageIds) {
    const current = await api.GET("/images/{imageId}", { params: { path: { imageId: id } } });
    const etag = current.response.headers.get("ETag") ?? "*";
    must(
      await api.PATCH("/images/{imageId}", {
        params: { path: { imageId: id }, header: { "If-Match": etag } },
        body: { keywords: ["planogram", "store14"] },
      }),
      "tag",
    );
  }

  const found: number[] = [];
  let after: string | undefined;
  do {
    const page = must(
      await api.GET("/projects/{projectId}/images", { params: { path: { projectId }, query: { q: "planogram", limit: 2, after } } }),
      "search",
    );
    found.push(...page.items.map((i) => i.id));
    after = page.next ?? undefined;
  } while (after);

  const board = must(
    await api.POST("/projects/{projectId}/boards", { params: { path: { projectId } }, body: { title: "Store 14 planogram" } }),
    "board",
  );
  must(await api.POST("/boards/{boardId}/images", { params: { path: { boardId: board.id } }, body: { imageIds: found } }), "add");
  const link = must(
    await api.POST("/boards/{boardId}/share-links", {
      params: { path: { boardId: board.id } },
      body: { label: "Client review", expiry: "30" },
    }),
    "share",
  );
  const shared = await fetch(link.url);
  if (!shared.ok) throw new Error(`read the share link: ${shared.status}`);
  const file = await api.GET("/images/{imageId}/file", { params: { path: { imageId: imageIds[0]! } }, parseAs: "arrayBuffer" });
  const original = new Uint8Array(must(file, "download") as ArrayBuffer);
  return { imageIds, found, boardId: board.id, shareUrl: link.url, sharedPage: await shared.text(), original };
}
