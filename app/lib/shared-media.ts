import type { CardLinks } from "~/components/image-card";

/** The URLs of a share link's images and pages (the token travels in them; the pages send no referrer). */
export const sharedMediaUrl = (sharedUrl: string, imageId: number, key: string) =>
  `/shared-media/${sharedUrl}/${imageId}/${key.replaceAll("/", "~")}`;

export const sharedLinks = (sharedUrl: string): CardLinks => ({
  media: (imageId, key) => sharedMediaUrl(sharedUrl, imageId, key),
  view: (imageId) => `/shared-board/${sharedUrl}/image/${imageId}`,
});
