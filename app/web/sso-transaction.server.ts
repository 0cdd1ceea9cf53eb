import { z } from "zod";
import { TRANSACTION_TTL_MS, type SsoTransaction } from "~/services/oidc.server";
import { signedCookie } from "./cookies.server";

/**
 * Company sign-in's transaction between the redirect out and the callback (services/oidc.server.ts): signed,
 * HttpOnly, SameSite=Lax (the provider's redirect back is a top-level GET, which Lax lets through), ten minutes.
 */
const cookie = signedCookie("koala_sso", { maxAgeSeconds: () => TRANSACTION_TTL_MS / 1000 });

const Transaction = z.object({
  provider: z.string(),
  state: z.string(),
  nonce: z.string(),
  verifier: z.string(),
  redirectTo: z.string().nullable(),
  startedAt: z.number(),
});

export async function readSsoTransaction(request: Request): Promise<SsoTransaction | null> {
  const parsed = Transaction.safeParse(await cookie().parse(request.headers.get("Cookie")));
  return parsed.success ? parsed.data : null;
}
export const writeSsoTransaction = (transaction: SsoTransaction) => cookie().serialize(transaction);
export const clearSsoTransaction = () => cookie().serialize("", { maxAge: 0 });
