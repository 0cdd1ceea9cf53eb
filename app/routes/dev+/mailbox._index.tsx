import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { config } from "~/config.server";
import { listMailbox } from "~/services/mail.server";

export const meta: MetaFunction = () => [{ title: "Local mailbox | Koala" }];

/** Development only: the mail the app would have sent, when SMTP_URL is not set. */
export async function loader(_: LoaderFunctionArgs) {
  const cfg = config();
  if (cfg.production || cfg.smtpUrl) throw data(null, { status: 404 });
  const mails = await listMailbox();
  return { mails: mails.slice(0, 200).map(({ id, to, subject, at }) => ({ id, to, subject, at })) };
}

export default function Mailbox() {
  const { mails } = useLoaderData<typeof loader>();
  return (
    <main className="mailbox" aria-labelledby="mailbox-title">
      <h1 id="mailbox-title">Local mailbox</h1>
      <p>Mail is kept here because SMTP_URL is not set. Newest first.</p>
      {mails.length === 0 ? (
        <p className="empty">No mail yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">To</th>
              <th scope="col">Subject</th>
            </tr>
          </thead>
          <tbody>
            {mails.map((m) => (
              <tr key={m.id}>
                <td>{new Date(m.at).toISOString().replace("T", " ").slice(0, 19)} UTC</td>
                <td>{m.to}</td>
                <td>
                  <Link to={`/dev/mailbox/${m.id}`}>{m.subject}</Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
