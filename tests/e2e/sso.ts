/**
 * Company sign-in in the e2e run: global-setup starts the local OpenID Provider (scripts/oidc-provider.mjs) with
 * these people, one set per browser project (so tests never share a provider session or a group change), and
 * configures every server with it as provider "e2e"; the seed maps its groups to SSO_PROJECT.
 */
export const SSO_ID = "e2e";
export const SSO_NAME = "Company SSO";
export const SSO_DOMAIN = "sso.test";
export const SSO_PASSWORD = "sso-pass-123";
export const SSO_PROJECT = "SSO project";
export const SSO_CLIENT_ID = "koala-e2e";
export const SSO_CLIENT_SECRET = "koala-e2e-secret-0123456789";
/** Who is who at the provider, per browser project: login → groups. */
export const SSO_PEOPLE = {
  first: ["sso-editors"],
  kb: ["sso-editors"],
  bc: ["sso-editors"],
  nogroup: ["marketing"],
  mapped: ["new-group"],
} as const;
export type SsoPerson = keyof typeof SSO_PEOPLE;
export const ssoLogin = (person: SsoPerson, project: string) => `${person}-${project}`;
export const ssoEmail = (person: SsoPerson, project: string) => `${ssoLogin(person, project)}@${SSO_DOMAIN}`;
/** The group the console test maps, per browser project (its "mapped" person is in it). */
export const ssoNewGroup = (project: string) => `new-group-${project}`;
/** The provider's address: global-setup puts it in the environment the workers inherit. */
export const ssoIssuer = () => {
  const issuer = process.env.E2E_SSO_ISSUER;
  if (!issuer) throw new Error("E2E_SSO_ISSUER is not set: global-setup starts the provider");
  return issuer;
};
