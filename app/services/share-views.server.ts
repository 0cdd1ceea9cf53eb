import { getErrorMessage } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { countLinkViews } from "~/models/share-access.server";
import type { SharedBoardScope } from "~/models/scope.server";

/**
 * This service owns the share pages' view counter: views are added up in this process's memory and written
 * together within VIEW_FLUSH_MS by a timer it owns, one UPDATE per link and second instead of one per view (the page
 * is answered from a cache, and a write per view cost more than the rest of the answer: bench P3). The buffer is
 * flushed before the team reads the counts (the share page) and at shutdown (boot.server.ts); a crash loses at most
 * VIEW_FLUSH_MS of views.
 */

/** How long views wait in memory before they are written, at most. */
export const VIEW_FLUSH_MS = 1000;
const pendingViews = new Map<number, { boardId: string; views: number; firstAt: number; lastAt: number; ip: string | null }>();
let flushTimer: ReturnType<typeof setTimeout> | null = null;

/** A view of the link's page, counted here until the next flush (the first of each day goes to the audit log). */
export function recordOpen(scope: SharedBoardScope, ip: string | null) {
  const now = Date.now();
  const pending = pendingViews.get(scope.link.id);
  if (pending) {
    pending.views++;
    pending.lastAt = Math.max(pending.lastAt, now);
  } else pendingViews.set(scope.link.id, { boardId: scope.board.id, views: 1, firstAt: now, lastAt: now, ip });
  scheduleFlush();
}

function scheduleFlush() {
  if (flushTimer) return;
  flushTimer = setTimeout(() => {
    flushViews().catch((error: unknown) => log.error("view count failed", { error: getErrorMessage(error) }));
  }, VIEW_FLUSH_MS);
  flushTimer.unref?.();
}

/**
 * Writes the views counted so far (on the timer, before the team reads the counts, and at shutdown). Views that could
 * not be written wait for the next flush.
 */
export async function flushViews() {
  if (flushTimer) clearTimeout(flushTimer);
  flushTimer = null;
  const batch = [...pendingViews];
  pendingViews.clear();
  for (const [i, [linkId, p]] of batch.entries()) {
    try {
      await countLinkViews({ id: linkId, boardId: p.boardId }, p.views, p.lastAt, p.firstAt, p.ip);
    } catch (error) {
      for (const [id, views] of batch.slice(i)) {
        const later = pendingViews.get(id);
        if (later) {
          later.views += views.views;
          later.firstAt = Math.min(later.firstAt, views.firstAt);
        } else pendingViews.set(id, views);
      }
      scheduleFlush();
      throw error;
    }
  }
}
