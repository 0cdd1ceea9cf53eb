import { REGISTRATION_DIGEST_JOB } from "~/lib/job-types";
import { config } from "~/config.server";
import type { MemberRole, RegistrationInput } from "~/lib/account-schemas";
import { escapeHtml } from "~/lib/html";
import { log } from "~/lib/log.server";
import type { Actor } from "~/models/actor";
import { activeAdmins, linkRecipient } from "~/models/admin-users.server";
import { byActor, recordAudit } from "~/models/audit.server";
import { hitRateLimit, requireWithinLimit } from "~/models/rate-limits.server";
import { approveRegistration, countPendingRegistrations, rejectRegistration, submitRegistration } from "~/models/registrations.server";
import { issueMagicLink, WELCOME_LINK_TTL_MS } from "~/models/sign-in-tokens.server";
import { normaliseEmail } from "~/models/users.server";
import type { RequestMeta } from "~/sessions.server";
import { dailyJob } from "./jobs.server";
import { ssoOnlyProviderFor } from "./oidc.server";
import { sendMail } from "./mail.server";

/**
 * A registration from the public form. Whatever the address, the answer on screen is the same; the e-mail differs:
 * the applicant is told it was received, an address that already has an account is told so (with the way in), and
 * one already waiting is told it still waits. False when a choice was not on its list (a hand-made post).
 */
export async function register(input: RegistrationInput, meta: RequestMeta): Promise<boolean> {
  const { rateLimit, appUrl } = config();
  await requireWithinLimit(
    `register:ip:${meta.ip ?? "unknown"}`,
    rateLimit.registrationsPerIp,
    rateLimit.windowMs,
    "Too many applications from this address.",
  );
  const to = normaliseEmail(input.email);
  // Each post mails the address it names: past the per-address limit nothing more is stored or sent (the answer
  // stays the same), so the form cannot be used to flood someone's mailbox.
  const perAddress = await hitRateLimit(`register:addr:${to}`, rateLimit.perAddress, rateLimit.windowMs);
  if (!perAddress.allowed) return true;
  const result = await submitRegistration(input, meta.ip);
  if (result.outcome === "invalid") return false;
  if (result.outcome === "has_account") {
    await sendMail({
      to,
      subject: "Your Koala application",
      text:
        `Someone applied for a Koala account with this address, but it already has one.\n\n` +
        (result.user.status === "disabled"
          ? "The account is disabled. Please contact your Koala administrator."
          : `You can sign in at ${appUrl}/login (an e-mailed link needs no password).`) +
        "\n\nIf it was not you, ignore this e-mail.",
    });
  } else {
    await sendMail({
      to,
      subject: "Your Koala application was received",
      text:
        // No name from the form in the mail: whoever posts chooses what it would say to the address's owner.
        "Hello,\n\nThank you for applying for a Koala account. " +
        (result.outcome === "waiting"
          ? "An earlier application of yours is still waiting for approval. "
          : "An administrator will review it. ") +
        "You will get an e-mail with a sign-in link once it is approved.\n",
    });
  }
  if (result.outcome === "stored")
    await recordAudit({ action: "registration.submitted", subject: `registration:${result.id}`, ip: meta.ip });
  return true;
}

/** Approves, then e-mails the new user a sign-in link (valid 72 hours). */
export async function approve(actor: Actor, id: number, memberships: { projectId: number; role: MemberRole }[]) {
  const user = await approveRegistration(actor, id, memberships);
  await sendSignInLink(user, "Your Koala account is ready", "Your application was approved.");
  return user;
}

/** Rejects, then tells the applicant (with the reason, when one was given). */
export async function reject(actor: Actor, id: number, reason: string | null) {
  const reg = await rejectRegistration(actor, id, reason);
  await sendMail({
    to: reg.email,
    subject: "Your Koala application",
    text: `Hello ${reg.name},\n\nYour application for a Koala account was not approved.${reason ? `\n\nReason: ${reason}` : ""}\n`,
  });
}

/** An admin's "Send sign-in link". */
export async function adminSendLink(actor: Actor, userId: number) {
  const user = await linkRecipient(actor, userId);
  await sendSignInLink(user, "Your Koala sign-in link", "An administrator sent you a link to sign in.");
  await recordAudit({ action: "user.link_sent", ...byActor(actor), subject: `user:${userId}` });
}

async function sendSignInLink(user: { id: number; email: string; name: string }, subject: string, why: string) {
  // An SSO-only address signs in through its company's provider: a link would be refused, so the mail says where.
  const provider = await ssoOnlyProviderFor(user.email);
  if (provider) {
    const login = `${config().appUrl}/login`;
    await sendMail({
      to: user.email,
      subject,
      text: `Hello ${user.name},\n\n${why} Sign in to Koala at ${login} with "Sign in with ${provider.name}".\n`,
      html: `<p>Hello ${escapeHtml(user.name)},</p><p>${escapeHtml(why)} Sign in to Koala at <a href="${login}">${login}</a> with "Sign in with ${escapeHtml(provider.name)}".</p>`,
    });
    return;
  }
  const link = `${config().appUrl}/auth/${await issueMagicLink(user.id, null, WELCOME_LINK_TTL_MS)}`;
  await sendMail({
    to: user.email,
    subject,
    text: `Hello ${user.name},\n\n${why} Use this link to sign in to Koala. It works once and expires in 72 hours:\n\n${link}\n`,
    html: `<p>Hello ${escapeHtml(user.name)},</p><p>${escapeHtml(why)} Use this link to sign in to Koala. It works once and expires in 72 hours:</p><p><a href="${link}">Sign in to Koala</a></p>`,
    devLink: link,
  });
}

/** The admins' daily digest of waiting applications (a daily job); nothing waiting, nothing sent. */
export async function sendRegistrationDigest(): Promise<number> {
  const waiting = await countPendingRegistrations();
  if (waiting === 0) return 0;
  const admins = await activeAdmins();
  const link = `${config().appUrl}/admin`;
  for (const admin of admins)
    await sendMail({
      to: admin.email,
      subject: `Koala: ${waiting} application${waiting === 1 ? "" : "s"} waiting for approval`,
      text: `Hello ${admin.name},\n\n${waiting} application${waiting === 1 ? " is" : "s are"} waiting for approval:\n\n${link}\n`,
    });
  log.info("registration digest sent", { waiting, admins: admins.length });
  return admins.length;
}

/** Housekeeping: the admins' digest is always queued once. */
/** The daily digest of waiting applications (REGISTRATION_DIGEST_JOB). */
export const registrationDigestJob = dailyJob(REGISTRATION_DIGEST_JOB, () => sendRegistrationDigest());
