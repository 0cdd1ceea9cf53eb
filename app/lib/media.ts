/** The URL of an image's stored object (served by server.mjs through app/lib/media.server.ts). */
export const mediaUrl = (imageId: number, key: string) => `/media/${imageId}/${key.replaceAll("/", "~")}`;
