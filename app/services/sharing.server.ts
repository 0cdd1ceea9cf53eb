import { REVIEW_DIGEST_JOB } from "~/lib/job-types";
import { config } from "~/config.server";
import { escapeHtml } from "~/lib/html";
import type { BoardScope } from "~/models/scope.server";
import { markDigested, pendingDigests } from "~/models/share-digests.server";
import { createShareLinks, type LinkOptions, type NewLink } from "~/models/share-links.server";
import { findUserById } from "~/models/users.server";
import { sendMail } from "./mail.server";
import { dailyJob } from "./jobs.server";

const whenText = (at: number | null) =>
  at === null
    ? "does not expire"
    : `works until ${new Date(at).toLocaleDateString("en-GB", { day: "numeric", month: "long", year: "numeric", timeZone: "UTC" })}`;

/**
 * Shares a board by e-mail: one link per recipient, each mailed (through the job queue) with the board's title, who
 * shared it, the link and when it expires, as plain text and HTML.
 */
export async function shareBoardByEmail(scope: BoardScope, recipients: string[], options: LinkOptions): Promise<NewLink[]> {
  const links = await createShareLinks(scope, recipients, options);
  const sharer = await findUserById(scope.actor.id);
  const who = sharer ? `${sharer.name} ${sharer.surname}`.trim() : "Someone at Koala";
  const { appUrl } = config();
  for (const link of links) {
    const url = `${appUrl}${link.path}`;
    const title = scope.board.title;
    await sendMail({
      to: link.recipient!,
      subject: `${who} shared the board “${title}” with you`,
      text: `Hello,\n\n${who} shared the board “${title}” with you on Koala.\n\nOpen it here (no sign-in needed; the link is yours alone, please do not forward it):\n${url}\n\nThe link ${whenText(link.expiresAt)}.\n`,
      html: `<p>Hello,</p><p>${escapeHtml(who)} shared the board “${escapeHtml(title)}” with you on Koala.</p><p><a href="${escapeHtml(url)}">Open the board</a> (no sign-in needed; the link is yours alone, please do not forward it).</p><p>The link ${whenText(link.expiresAt)}.</p>`,
    });
  }
  return links;
}

/** Midnight UTC after `now`: the digest goes out once a day. */
/**
 * The daily digest: each board owner gets one e-mail with the review activity on their board since the last
 * digest (not one mail per click). The job queues its next run itself; housekeeping makes sure one is queued.
 */
export async function sendReviewDigests(now = Date.now()) {
  const { appUrl } = config();
  for (const item of await pendingDigests(now)) {
    const lines = item.reviews.map(
      (r) => `- ${r.image}: ${r.visitor} ${r.mark ? `${r.mark}` : "commented"}${r.comment ? ` — “${r.comment}”` : ""}`,
    );
    const url = `${appUrl}/${item.projectId}/board/${item.boardId}`;
    await sendMail({
      to: item.ownerEmail,
      subject: `New reviews on “${item.boardTitle}”`,
      text: `Hello ${item.ownerName},\n\nNew review activity on your board “${item.boardTitle}”:\n\n${lines.join("\n")}\n\n${url}\n`,
      html: `<p>Hello ${escapeHtml(item.ownerName)},</p><p>New review activity on your board “${escapeHtml(item.boardTitle)}”:</p><ul>${item.reviews
        .map(
          (r) =>
            `<li>${escapeHtml(r.image)}: ${escapeHtml(r.visitor)} ${r.mark ? escapeHtml(r.mark) : "commented"}${r.comment ? ` — “${escapeHtml(r.comment)}”` : ""}</li>`,
        )
        .join("")}</ul><p><a href="${escapeHtml(url)}">Open the board</a></p>`,
    });
    await markDigested(item.boardId, now);
  }
}

/** Housekeeping: the daily digest is always queued once. */
/** The daily review digest (REVIEW_DIGEST_JOB). */
export const reviewDigestJob = dailyJob(REVIEW_DIGEST_JOB, () => sendReviewDigests());
