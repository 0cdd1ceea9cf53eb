import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { config } from "~/config.server";
import { readMail } from "~/services/mail.server";

export const meta: MetaFunction = () => [{ title: "Mail | Koala" }];

export async function loader({ params }: LoaderFunctionArgs) {
  const cfg = config();
  if (cfg.production || cfg.smtpUrl) throw data(null, { status: 404 });
  const mail = await readMail(params.id ?? "");
  if (!mail) throw data(null, { status: 404 });
  return {
    mail: { to: mail.to, from: mail.from, subject: mail.subject, text: mail.text, at: mail.at },
    attachments: (mail.attachments ?? []).map((a) => ({ filename: a.filename, href: `data:${a.contentType};base64,${a.contentBase64}` })),
  };
}

/** Shows the plain-text part: links in it are made clickable, nothing else is interpreted. */
export default function MailView() {
  const { mail, attachments } = useLoaderData<typeof loader>();
  const parts = mail.text.split(/(https?:\/\/\S+)/g);
  return (
    <main className="mailbox" aria-labelledby="mail-title">
      <p>
        <Link to="/dev/mailbox">← Local mailbox</Link>
      </p>
      <h1 id="mail-title">{mail.subject}</h1>
      <dl className="mail-meta">
        <dt>From</dt>
        <dd>{mail.from}</dd>
        <dt>To</dt>
        <dd>{mail.to}</dd>
      </dl>
      <pre className="mail-body">
        {parts.map((part, i) =>
          /^https?:\/\//.test(part) ? (
            <a key={i} href={part}>
              {part}
            </a>
          ) : (
            part
          ),
        )}
      </pre>
      {attachments.length ? (
        <ul aria-label="Attachments">
          {attachments.map((a) => (
            <li key={a.filename}>
              <a href={a.href} download={a.filename}>
                {a.filename}
              </a>
            </li>
          ))}
        </ul>
      ) : null}
    </main>
  );
}
