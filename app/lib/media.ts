/** The URL of an image's stored object (see routes/media.$imageId.$key.ts). */
export const mediaUrl = (imageId: number, key: string) => `/media/${imageId}/${key.replaceAll("/", "~")}`;
