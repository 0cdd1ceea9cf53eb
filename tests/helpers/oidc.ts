import { createServer, type Server } from "node:http";
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from "jose";
import { startOidcProvider } from "../../scripts/oidc-provider.mjs";

/**
 * Company sign-in's stand-ins: the real OpenID Provider (`oidc-provider`, scripts/oidc-provider.mjs) with people and
 * groups the test sets, a hostile provider that answers with whatever ID token a test forges, and a cookie jar that
 * walks the redirects between Koala and a provider as a browser without JavaScript would.
 */

export interface Person {
  password: string;
  email: string;
  emailVerified?: boolean;
  givenName: string;
  familyName: string;
  groups: string[];
}

export const CLIENT_ID = "koala-test";
export const CLIENT_SECRET = "koala-test-secret-0123456789";

/**
 * The real provider, with Koala at `appBase` as its one client: a redirect URI for each of Koala's provider ids that
 * use it, the post-logout URI, and the first id's back-channel logout URI.
 */
export async function startTestProvider(appBase: string, providerIds: string | string[], people: Map<string, Person>) {
  const ids = typeof providerIds === "string" ? [providerIds] : providerIds;
  return startOidcProvider({
    people,
    title: "Test SSO",
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: ids.map((id) => `${appBase}/auth/sso/${id}/callback`),
        post_logout_redirect_uris: [`${appBase}/login`],
        backchannel_logout_uri: `${appBase}/auth/sso/${ids[0]}/backchannel-logout`,
      },
    ],
  }) as Promise<{
    issuer: string;
    backchannelLogout(clientId: string, sub: string, sid: string | null): Promise<void>;
    close(): Promise<void>;
  }>;
}

/** The environment that configures one provider in Koala. */
export const providerEnv = (id: string, issuer: string, extra: Record<string, string> = {}) => {
  const key = (k: string) => `OIDC_${id.toUpperCase()}_${k}`;
  return {
    [key("ISSUER")]: issuer,
    [key("CLIENT_ID")]: CLIENT_ID,
    [key("CLIENT_SECRET")]: CLIENT_SECRET,
    ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [key(k), v])),
  };
};

/** Cookies per origin, sent back as a browser would (no expiry or path rules: each test's flows are short). */
export class CookieJar {
  private jars = new Map<string, Map<string, string>>();
  constructor(private readonly userAgent = "sso integration test") {}

  cookie(origin: string) {
    return [...(this.jars.get(origin) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  get(origin: string, name: string) {
    return this.jars.get(origin)?.get(name);
  }
  clear(origin: string, name: string) {
    this.jars.get(origin)?.delete(name);
  }

  async fetch(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const origin = new URL(url).origin;
    const res = await fetch(url, {
      method: init.method ?? (init.form ? "POST" : "GET"),
      redirect: "manual",
      headers: {
        "User-Agent": this.userAgent,
        ...(this.cookie(origin) ? { Cookie: this.cookie(origin) } : {}),
        ...(init.form ? { "Content-Type": "application/x-www-form-urlencoded", Origin: origin } : {}),
      },
      body: init.form ? new URLSearchParams(init.form) : undefined,
    });
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    for (const set of res.headers.getSetCookie()) {
      const [pair, ...attrs] = set.split(";");
      const at = pair!.indexOf("=");
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      if (!value || attrs.some((a) => /max-age=0\b/i.test(a) || /expires=thu, 01 jan 1970/i.test(a))) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }

  /** Follows redirects (each hop through `fetch`, keeping cookies) until an answer that is not one; returns it and the hops. */
  async follow(url: string, init: { method?: string; form?: Record<string, string> } = {}, stopAt?: (url: string) => boolean) {
    const hops: string[] = [url];
    let res = await this.fetch(url, init);
    while (res.status >= 300 && res.status < 400 && res.headers.get("Location")) {
      const next = new URL(res.headers.get("Location")!, hops.at(-1)).href;
      hops.push(next);
      if (stopAt?.(next)) break;
      res = await this.fetch(next);
    }
    return { res, hops, url: hops.at(-1)! };
  }
}

/**
 * A person's whole sign-in without JavaScript: Koala's "Sign in with" link, the provider's sign-in form, and back.
 * Returns Koala's last answer (a redirect into the app, or a refusal page) and the callback's URL.
 */
export async function signInThroughProvider(
  jar: CookieJar,
  appBase: string,
  providerId: string,
  login: string,
  password: string,
  query = "",
) {
  const out = await jar.follow(`${appBase}/auth/sso/${providerId}${query}`);
  if (out.res.status !== 200 || !/\/interaction\//.test(out.url))
    throw new Error(`expected the provider's sign-in page, got ${out.res.status} ${out.url}`);
  const callback = await jar.follow(out.url, { form: { login, password } }, (url) => url.startsWith(appBase));
  const res = await jar.fetch(callback.url);
  return { res, callbackUrl: callback.url };
}

/**
 * A provider that signs whatever a test asks: discovery, keys, an authorization endpoint that sends the person
 * straight back with a code, and a token endpoint whose ID token `forge` makes from the request's nonce. Its keys are
 * real (RS256); `otherKey` signs with a key it does not publish.
 */
export async function startHostileProvider(appBase: string, providerId: string) {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const other = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", use: "sig", alg: "RS256" };
  const nonces = new Map<string, string>();
  let issuer = "";
  const state = {
    /** Claims on top of the defaults, and how to sign; set by each test. */
    claims: {} as JWTPayload,
    sign: "good" as "good" | "otherKey" | "none",
    /** Milliseconds the token endpoint waits before it answers. */
    delayMs: 0,
  };
  const idToken = async (nonce: string) => {
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = {
      iss: issuer,
      aud: CLIENT_ID,
      sub: "evil-subject",
      iat: now,
      exp: now + 300,
      nonce,
      email: "mallory@evil.test",
      email_verified: true,
      given_name: "Mallory",
      family_name: "Evil",
      groups: ["evil-editors"],
      ...state.claims,
    };
    if (state.sign === "none") {
      const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
      return `${enc({ alg: "none", typ: "JWT" })}.${enc(payload)}.`;
    }
    const key = state.sign === "otherKey" ? other.privateKey : privateKey;
    return new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid: "k1" }).sign(key);
  };
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url!, issuer);
    const json = (body: unknown, status = 200) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === "/.well-known/openid-configuration")
      return json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
      });
    if (url.pathname === "/jwks") return json({ keys: [jwk] });
    if (url.pathname === "/authorize") {
      const code = `code-${Math.random().toString(36).slice(2)}`;
      nonces.set(code, url.searchParams.get("nonce") ?? "");
      const back = new URL(url.searchParams.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      res.writeHead(302, { Location: back.href });
      return res.end();
    }
    if (url.pathname === "/token") {
      let body = "";
      for await (const chunk of req) body += chunk;
      const code = new URLSearchParams(body).get("code") ?? "";
      if (state.delayMs) await new Promise((r) => setTimeout(r, state.delayMs));
      if (!nonces.has(code)) return json({ error: "invalid_grant" }, 400);
      return json({ access_token: "at", token_type: "Bearer", expires_in: 300, id_token: await idToken(nonces.get(code)!) });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    issuer,
    state,
    redirectUri: `${appBase}/auth/sso/${providerId}/callback`,
    /** A logout token as a provider would post it, with `claims` on top; signed as `sign` says. */
    async logoutToken(claims: JWTPayload, sign: "good" | "otherKey" | "none" = "good", typ = "logout+jwt") {
      const now = Math.floor(Date.now() / 1000);
      const payload: JWTPayload = {
        iss: issuer,
        aud: CLIENT_ID,
        iat: now,
        jti: `jti-${Math.random().toString(36).slice(2)}`,
        events: { "http://schemas.openid.net/event/backchannel-logout": {} },
        ...claims,
      };
      if (sign === "none") {
        const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
        return `${enc({ alg: "none" })}.${enc(payload)}.`;
      }
      return new SignJWT(payload)
        .setProtectedHeader({ alg: "RS256", kid: "k1", typ })
        .sign(sign === "otherKey" ? other.privateKey : privateKey);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** An address that accepts connections and never answers (a provider that hangs). */
export async function startSilentServer() {
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer(() => {});
  server.on("connection", (s) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
