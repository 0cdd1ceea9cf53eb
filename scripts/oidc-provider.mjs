// A local OpenID Provider for the demo and the tests: `oidc-provider` (the certified Node implementation) with people
// and groups held in memory, its own small sign-in page (plain HTML forms: it works without JavaScript), PKCE
// required, the groups in the ID token, RP-initiated and back-channel logout. Never for production: the people and
// their passwords are the caller's, and the signing key is made afresh at each start.
//
//   node scripts/oidc-provider.mjs            the demo's provider on http://localhost:3001 (npm start runs it)
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import Provider from "oidc-provider";

const page = (title, body) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem}label{display:block;margin-top:.8rem}
input{display:block;width:100%;padding:.4rem;margin-top:.2rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}
.error{color:#a00}</style></head><body><main>${body}</main></body></html>`;
const escape = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Starts the provider. `people`: login → { password, email, emailVerified?, givenName, familyName, groups }; the map
 * is read at every sign-in, so a test may change a person's groups between two. `clients`: the relying parties, as
 * oidc-provider takes them (client_id, client_secret, redirect_uris, post_logout_redirect_uris, backchannel_logout_uri).
 * `controls` (tests only): two more addresses, for a test in another process, to act as the provider's admin:
 * `PUT /_control/people/:login/groups` (a JSON array) and `POST /_control/people/:login/logout` (a back-channel
 * logout of each of that person's provider sessions, to every client).
 * Resolves with { issuer, provider, backchannelLogout(clientId, sub, sid), close() }.
 */
export async function startOidcProvider({
  port = 0,
  host = "127.0.0.1",
  issuerHost = host,
  people,
  clients,
  title = "Local SSO",
  controls = false,
}) {
  const server = createServer();
  await new Promise((resolve) => server.listen(port, host, resolve));
  const bound = server.address().port;
  const issuer = `http://${issuerHost}:${bound}`;
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: randomBytes(6).toString("hex"), use: "sig", alg: "RS256" };

  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      backchannel_logout_session_required: true,
      ...c,
    })),
    jwks: { keys: [jwk] },
    // Its calls out (back-channel logout) go to Koala on this machine: without oidc-provider's guard against
    // special-use addresses (loopback is one), which a provider on the internet rightly keeps.
    fetch: (url, { dispatcher: _guard, ...options }) => globalThis.fetch(url, options),
    cookies: { keys: [randomBytes(32).toString("hex")] },
    pkce: { required: () => true },
    // The claims asked for by scope go in the ID token too (as Entra ID, Okta and Keycloak can be set to do).
    conformIdTokenClaims: false,
    claims: { openid: ["sub", "sid"], email: ["email", "email_verified"], profile: ["name", "given_name", "family_name", "groups"] },
    features: {
      devInteractions: { enabled: false },
      backchannelLogout: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          ctx.body = page(
            "Sign out",
            `<h1>Sign out of ${escape(title)}?</h1>${form}<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>`,
          );
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.body = page("Signed out", `<h1>You are signed out of ${escape(title)}</h1>`);
        },
      },
    },
    // Koala is this provider's only client: its consent is given, as a company's IT department would set it.
    loadExistingGrant: async (ctx) => {
      const id = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (id) return ctx.oidc.provider.Grant.find(id);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
    findAccount: async (_ctx, login) => {
      const person = people.get(login);
      if (!person) return undefined;
      return {
        accountId: login,
        claims: async () => ({
          sub: login,
          email: person.email,
          email_verified: person.emailVerified ?? true,
          name: `${person.givenName} ${person.familyName}`,
          given_name: person.givenName,
          family_name: person.familyName,
          groups: [...person.groups],
        }),
      };
    },
    renderError: async (ctx, out) => {
      ctx.type = "html";
      ctx.body = page("Error", `<h1>Sign-in error</h1><p class="error">${escape(out.error)}: ${escape(out.error_description)}</p>`);
    },
  });

  // Each person's provider sessions (sid), from the codes exchanged: what a back-channel logout names.
  const sids = new Map();
  provider.on("grant.success", (ctx) => {
    const code = ctx.oidc.entities.AuthorizationCode;
    if (code?.sid && code.accountId) sids.set(code.accountId, new Set([...(sids.get(code.accountId) ?? []), code.sid]));
  });
  const logoutEverywhere = async (login) => {
    for (const sid of sids.get(login) ?? [])
      for (const c of clients) if (c.backchannel_logout_uri) await (await provider.Client.find(c.client_id)).backchannelLogout(login, sid);
    sids.delete(login);
  };
  const control = async (req, res) => {
    const match = /^\/_control\/people\/([\w-]+)\/(groups|logout)$/.exec(new URL(req.url, issuer).pathname);
    if (!controls || !match) return false;
    const person = people.get(match[1]);
    if (!person) {
      res.writeHead(404).end();
      return true;
    }
    if (match[2] === "groups" && req.method === "PUT") {
      let body = "";
      for await (const chunk of req) body += chunk;
      person.groups = JSON.parse(body);
    } else if (match[2] === "logout" && req.method === "POST") await logoutEverywhere(match[1]);
    else {
      res.writeHead(405).end();
      return true;
    }
    res.writeHead(204).end();
    return true;
  };

  // The sign-in page: login and password, checked against `people`.
  const interactions = async (req, res) => {
    const url = new URL(req.url, issuer);
    const match = /^\/interaction\/([\w-]+)$/.exec(url.pathname);
    if (!match) return false;
    const details = await provider.interactionDetails(req, res);
    // The field to type in first has the focus: the password when the username is known already (a login hint).
    const form = (error, login, known = login ?? details.params.login_hint) =>
      page(
        `Sign in to ${title}`,
        `<h1>Sign in to ${escape(title)}</h1>${error ? `<p class="error" role="alert">${escape(error)}</p>` : ""}
<form method="post" action="/interaction/${escape(details.uid)}">
<label for="login">Username</label><input id="login" name="login" autocomplete="username" required value="${escape(known ?? "")}"${known ? "" : " autofocus"}>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required${known ? " autofocus" : ""}>
<button type="submit">Sign in</button></form>`,
      );
    res.setHeader("Cache-Control", "no-store");
    if (req.method === "GET") {
      res.setHeader("Content-Type", "text/html; charset=utf-8");
      res.end(form());
      return true;
    }
    let body = "";
    for await (const chunk of req) body += chunk;
    const fields = new URLSearchParams(body);
    const typed = fields.get("login") ?? "";
    // A login hint may be an e-mail address: its person is the one with that address.
    const login = people.has(typed) ? typed : [...people].find(([, p]) => p.email === typed.toLowerCase())?.[0];
    const person = login ? people.get(login) : undefined;
    if (!person || person.password !== fields.get("password")) {
      res.statusCode = 400;
      res.setHeader("Content-Type", "text/html; charset=utf-8");
      res.end(form("Wrong username or password.", typed));
      return true;
    }
    await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
    return true;
  };
  const callback = provider.callback();
  server.on("request", (req, res) => {
    control(req, res)
      .then((handled) => handled || interactions(req, res))
      .then((handled) => handled || callback(req, res))
      .catch((error) => {
        res.statusCode = 500;
        res.end(String(error?.message ?? error));
      });
  });

  return {
    issuer,
    provider,
    /** Ends a person's sessions at Koala as the provider's admin would: a signed logout token to the client's URI. */
    async backchannelLogout(clientId, sub, sid) {
      const client = await provider.Client.find(clientId);
      await client.backchannelLogout(sub, sid);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The demo's provider: its people are the demo library's (services/demo.server.ts), password "demo". */
export const DEMO_SSO = {
  port: 3001,
  clientId: "koala-demo",
  clientSecret: "koala-demo-secret-not-for-production",
  people: [
    ["maria", { email: "maria.santos@acme.example", givenName: "Maria", familyName: "Santos", groups: ["koala-editors"] }],
    ["tom", { email: "tom.baker@acme.example", givenName: "Tom", familyName: "Baker", groups: ["koala-viewers"] }],
  ],
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const appUrl = (process.env.APP_URL ?? "http://localhost:3000").replace(/\/$/, "");
  const port = Number(process.env.DEMO_SSO_PORT ?? DEMO_SSO.port);
  const op = await startOidcProvider({
    port,
    host: "127.0.0.1",
    issuerHost: "127.0.0.1",
    title: "Demo SSO",
    people: new Map(DEMO_SSO.people.map(([login, p]) => [login, { ...p, password: "demo" }])),
    clients: [
      {
        client_id: DEMO_SSO.clientId,
        client_secret: DEMO_SSO.clientSecret,
        redirect_uris: [`${appUrl}/auth/sso/demo/callback`],
        post_logout_redirect_uris: [`${appUrl}/login`],
        backchannel_logout_uri: `${appUrl}/auth/sso/demo/backchannel-logout`,
      },
    ],
  });
  console.log(`Demo SSO (OpenID Provider) at ${op.issuer}: sign in as maria or tom, password "demo"`);
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => op.close().then(() => process.exit(0)));
}
