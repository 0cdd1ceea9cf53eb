/** The URL of an image's stored object (served by server/index.ts through app/lib/media.server.ts). */
export const mediaUrl = (imageId: number, key: string) => `/media/${imageId}/${key.replaceAll("/", "~")}`;

/** A project's logo: the key's hash in the query, so the address changes with the logo and may be cached for good. */
export const logoUrl = (projectId: number, key: string) => `/client/${projectId}/logo?v=${key.split("/").pop()!.slice(0, 16)}`;

/**
 * The grid's own thumbnail: the 480-pixel thumbnail made 240 pixels wide. A card is drawn about 220 pixels wide, so a
 * browser on a screen of one device pixel per CSS pixel decodes a quarter of the pixels (bench P8b; decision 0033).
 */
export const GRID_THUMB_WIDTH = 240;
const GRID_SUFFIX = `-w${GRID_THUMB_WIDTH}.webp`;

/** The grid thumbnail's key beside a thumbnail's (`thumbs/ab/cd/<hash>[-r90].webp` → `…[-r90]-w240.webp`). */
export const gridThumbKey = (thumbKey: string) => thumbKey.replace(/\.webp$/, GRID_SUFFIX);

/** The thumbnail a grid thumbnail's key is made from; null for any other key. */
export const thumbOfGridKey = (key: string) =>
  key.startsWith("thumbs/") && key.endsWith(GRID_SUFFIX) ? key.slice(0, -GRID_SUFFIX.length) + ".webp" : null;

/**
 * How wide a card is drawn, for the browser's choice between the two thumbnails: the image grid's columns beside the
 * search sidebar (app.css: 17rem sidebar, 1.5rem gaps and padding, 15px between cards; 2, 3 or 4 columns). Not
 * `auto`: the browser chooses before layout when it loads at once (without JavaScript there is no lazy loading),
 * and took the whole window's width then.
 */
export const CARD_SIZES =
  "(min-width: 1200px) calc((100vw - 389px) / 4), (min-width: 801px) calc((100vw - 374px) / 3), calc((100vw - 63px) / 2)";

/** The srcset of a card's thumbnail: the grid thumbnail and the full one, by their widths. */
export const cardSrcSet = (gridUrl: string, thumbUrl: string) => `${gridUrl} ${GRID_THUMB_WIDTH}w, ${thumbUrl} 480w`;
