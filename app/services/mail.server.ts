import { MAIL_JOB } from "~/lib/job-types";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import nodemailer from "nodemailer";
import { config } from "~/config.server";
import { randomToken } from "~/lib/crypto.server";
import { log } from "~/lib/log.server";
import { defineJob, queue } from "./jobs.server";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Printed to the server log by the local mailbox only (the sign-in link, outside production). */
  devLink?: string;
  /** Small files only (the message goes through the job queue as JSON): base64 content. */
  attachments?: { filename: string; contentType: string; contentBase64: string }[];
}

export interface StoredMail extends MailMessage {
  id: string;
  from: string;
  at: number;
}

const mailboxDir = () => path.join(config().dataDir, "mailbox");

let transport: nodemailer.Transporter | undefined;

/** Delivers now: over SMTP when SMTP_URL is set, else into the local mailbox. */
export async function deliver(msg: MailMessage) {
  const cfg = config();
  if (cfg.smtpUrl) {
    transport ??= nodemailer.createTransport(cfg.smtpUrl);
    // One recipient, as an address object: never parsed as a list, whatever the string holds.
    await transport.sendMail({
      from: cfg.mailFrom,
      to: { name: "", address: msg.to },
      subject: msg.subject,
      text: msg.text,
      html: msg.html,
      attachments: msg.attachments?.map((a) => ({
        filename: a.filename,
        contentType: a.contentType,
        content: Buffer.from(a.contentBase64, "base64"),
      })),
    });
    return;
  }
  if (cfg.production) throw new Error("SMTP_URL is not set");
  const at = Date.now();
  const id = `${at}-${randomToken(6)}`;
  await mkdir(mailboxDir(), { recursive: true });
  const stored: StoredMail = {
    id,
    from: cfg.mailFrom,
    at,
    to: msg.to,
    subject: msg.subject,
    text: msg.text,
    html: msg.html,
    attachments: msg.attachments,
  };
  await writeFile(path.join(mailboxDir(), `${id}.json`), JSON.stringify(stored, null, 2), { mode: 0o600 });
  // The local mailbox is for development: its link (to click, so not masked as a token) goes into the log line.
  log.info("mail stored in local mailbox", { to: msg.to, subject: msg.subject, ...(msg.devLink ? { link: msg.devLink } : {}) });
}

/** Mail's job (MAIL_JOB): one message, retried with backoff while the SMTP server refuses it. */
export const mailJob = defineJob(deliver);

/** Sends through the durable job queue (retried with backoff). */
export async function sendMail(msg: MailMessage) {
  await queue(MAIL_JOB, msg, { maxAttempts: 8 });
}

/** The local mailbox (development only), newest first. */
export async function listMailbox(): Promise<StoredMail[]> {
  let files: string[] = [];
  try {
    files = await readdir(mailboxDir());
  } catch {
    return [];
  }
  const mails = await Promise.all(
    files.filter((f) => f.endsWith(".json")).map(async (f) => JSON.parse(await readFile(path.join(mailboxDir(), f), "utf8")) as StoredMail),
  );
  return mails.sort((a, b) => b.at - a.at);
}

export async function readMail(id: string): Promise<StoredMail | null> {
  if (!/^[\w-]+$/.test(id)) return null;
  try {
    return JSON.parse(await readFile(path.join(mailboxDir(), `${id}.json`), "utf8")) as StoredMail;
  } catch {
    return null;
  }
}
