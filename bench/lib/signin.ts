import { totpCode } from "~/lib/totp.server";
import type { Dataset } from "./datasets";

/**
 * Signs the dataset's bench user in over HTTP, the way a person without JavaScript does: the password form
 * (e-mail, password, TOTP code) posted to /login. Returns the session cookie as `name=value`.
 * A TOTP code works once, so if this step's code was already spent (a run moments ago), the next step's is
 * tried (the app accepts ±1 step), then the harness waits for a fresh step.
 */
export async function signIn(baseUrl: string, ds: Dataset): Promise<string> {
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt >= 2) await new Promise((r) => setTimeout(r, 30_000));
    const body = new URLSearchParams({
      intent: "mfa",
      email: ds.email,
      password: ds.password,
      code: totpCode(ds.totpSecret, Date.now() + (attempt === 0 ? 0 : 30_000)),
      redirectTo: "/dashboard",
    });
    const res = await fetch(`${baseUrl}/login?method=password`, { method: "POST", body, redirect: "manual" });
    await res.arrayBuffer();
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(";")[0]!)
      .find((c) => /^(__Host-)?koala_session=./.test(c));
    if (res.status >= 300 && res.status < 400 && cookie) return cookie;
  }
  throw new Error(`Could not sign in as ${ds.email} at ${baseUrl}`);
}
