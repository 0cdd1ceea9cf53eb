/** Cards per server-rendered grid page. */
export const PAGE_SIZE = 60;
