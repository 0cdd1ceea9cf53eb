/** The URL of an image's stored object (served by server/index.ts through app/lib/media.server.ts). */
export const mediaUrl = (imageId: number, key: string) => `/media/${imageId}/${key.replaceAll("/", "~")}`;

/** A project's logo: the key's hash in the query, so the address changes with the logo and may be cached for good. */
export const logoUrl = (projectId: number, key: string) => `/client/${projectId}/logo?v=${key.split("/").pop()!.slice(0, 16)}`;
