import { DataTable } from "~/components/data-table";
import { IntentButton } from "~/components/forms";
import type { TokenRow } from "~/models/api-tokens.server";

type TokenView = TokenRow & { email?: string };

const time = (ms: number | null) => (ms === null ? "Never" : new Date(ms).toISOString().replace("T", " ").slice(0, 16) + " UTC");

/**
 * Personal access tokens as a table: what each may do, where, until when, its last use, and a Revoke (a post of
 * `intent=revoke`, `token=<id>` to the page) while it still works. The profile's own and the console's everyone's.
 */
export function TokenTable({
  tokens,
  now,
  labelledBy,
  owners = false,
}: {
  tokens: TokenView[];
  now: number;
  labelledBy: string;
  owners?: boolean;
}) {
  const columns = [...(owners ? ["Owner"] : []), "Name", "Access", "Projects", "Created", "Expires", "Last used", ""];
  return (
    <DataTable columns={columns} labelledBy={labelledBy}>
      {tokens.map((t) => {
        const state = t.revokedAt ? "Revoked" : t.expiresAt <= now ? "Expired" : null;
        return (
          <tr key={t.id}>
            {owners ? <td>{t.email}</td> : null}
            <td>
              {t.name}
              {state ? <span className="muted"> ({state})</span> : null}
            </td>
            <td>{t.write ? "Read and write" : "Read"}</td>
            <td>{t.projects ? t.projects.map((p) => p.name).join(", ") : owners ? "All of the owner's projects" : "All my projects"}</td>
            <td>{time(t.createdAt)}</td>
            <td>{time(t.expiresAt)}</td>
            <td>{t.lastUsedAt === null ? "Never" : `${time(t.lastUsedAt)} from ${t.lastUsedIp ?? "unknown"}`}</td>
            <td>
              {state ? null : (
                <IntentButton intent="revoke" fields={{ token: String(t.id) }}>
                  Revoke<span className="sr-only"> {t.name}</span>
                </IntentButton>
              )}
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
