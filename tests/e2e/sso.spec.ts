import type { Page, TestInfo } from "@playwright/test";
import { expect, test } from "./fixtures";
import { ssoEmail, ssoIssuer, ssoLogin, ssoNewGroup, SSO_NAME, SSO_PASSWORD, SSO_PROJECT, type SsoPerson } from "./sso";
import { expectAccessible, hasJs, tabTo } from "./support";

/**
 * Company sign-in in a real browser, with JavaScript and without: Koala's "Sign in with" link, the provider's own
 * sign-in page (oidc-provider, started by global-setup), and back; roles from the provider's groups; sign-out
 * through the provider; a back-channel logout; an SSO-only address typed in the e-mail field; the admin console's
 * group table.
 */
const login = (person: SsoPerson, info: TestInfo) => ssoLogin(person, info.project.name);

/** The provider's own page: username (or the address it was given) and password. */
async function signInAtProvider(page: Page, person: SsoPerson, info: TestInfo) {
  await expect(page.getByRole("heading", { name: `Sign in to ${SSO_NAME}` })).toBeVisible();
  await page.getByLabel("Username").fill(login(person, info));
  await page.getByLabel("Password").fill(SSO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** The provider's admin: a person's groups, or every provider session of theirs ended (a back-channel logout). */
async function providerAdmin(person: SsoPerson, info: TestInfo, action: { groups: string[] } | "logout") {
  const base = `${ssoIssuer()}/_control/people/${login(person, info)}`;
  const res =
    action === "logout"
      ? await fetch(`${base}/logout`, { method: "POST" })
      : await fetch(`${base}/groups`, { method: "PUT", body: JSON.stringify(action.groups) });
  expect(res.status).toBe(204);
}

async function acceptTerms(page: Page) {
  await expect(page).toHaveURL(/\/terms/);
  await page.getByRole("button", { name: "Yes" }).click();
}

test.describe("company sign-in", () => {
  test("signs in through the provider's page to the page asked for, with the role its groups give; sign-out ends the provider's session; a group change applies at the next sign-in", async ({
    page,
    db,
  }, info) => {
    const project = await db.selectFrom("projects").select("id").where("name", "=", SSO_PROJECT).executeTakeFirstOrThrow();
    await page.goto(`/client/${project.id}`);
    await expect(page).toHaveURL(/\/login\?redirectTo=/);
    await expectAccessible(page, info);
    await page.getByRole("link", { name: `Sign in with ${SSO_NAME}` }).click();
    await signInAtProvider(page, "first", info);
    await acceptTerms(page);
    await expect(page).toHaveURL(new RegExp(`/client/${project.id}$`));
    await expect(page.getByRole("link", { name: "Upload images" })).toBeVisible();

    // Sign-out goes on to the provider, which asks, then sends the person back to Koala's sign-in page.
    await providerAdmin("first", info, { groups: ["sso-viewers"] });
    await page.getByLabel(/profile menu/i).click();
    await page.getByRole("button", { name: "Logout" }).click();
    await expect(page.getByRole("heading", { name: `Sign out of ${SSO_NAME}?` })).toBeVisible();
    await page.getByRole("button", { name: "Yes, sign me out" }).click();
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByRole("status").filter({ hasText: "You have been logged out." })).toBeVisible();

    // The provider's session ended too: its page asks again. Now a viewer: no upload.
    await page.getByRole("link", { name: `Sign in with ${SSO_NAME}` }).click();
    await signInAtProvider(page, "first", info);
    await expect(page).toHaveURL(/\/dashboard$/);
    await page.goto(`/client/${project.id}`);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await expect(page.getByText(SSO_PROJECT).first()).toBeVisible();
    await expect(page.getByRole("link", { name: "Upload images" })).toHaveCount(0);
  });

  test("keyboard only: an SSO-only address typed in the e-mail field goes to the provider, which knows it", async ({ page }, info) => {
    await page.goto("/login");
    await tabTo(page, page.getByLabel("Email", { exact: true }));
    await page.keyboard.type(ssoEmail("kb", info.project.name));
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { name: `Sign in to ${SSO_NAME}` })).toBeVisible();
    await expect(page.getByLabel("Username")).toHaveValue(ssoEmail("kb", info.project.name));
    await expect(page.getByLabel("Password")).toBeFocused();
    await page.keyboard.type(SSO_PASSWORD);
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/terms/);
    await tabTo(page, page.getByRole("button", { name: "Yes" }));
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/dashboard$/);
  });

  test("a back-channel logout from the provider ends the session in another browser", async ({ page, browser }, info) => {
    await page.goto("/login");
    await page.getByRole("link", { name: `Sign in with ${SSO_NAME}` }).click();
    await signInAtProvider(page, "bc", info);
    await acceptTerms(page);
    await expect(page).toHaveURL(/\/dashboard$/);

    const other = await browser.newContext({ javaScriptEnabled: info.project.use.javaScriptEnabled !== false });
    const second = await other.newPage();
    await second.goto(`${info.project.use.baseURL}/login`);
    await second.getByRole("link", { name: `Sign in with ${SSO_NAME}` }).click();
    await signInAtProvider(second, "bc", info);
    await expect(second).toHaveURL(/\/dashboard$/);

    // The person's company account is signed out everywhere at the provider.
    await providerAdmin("bc", info, "logout");
    for (const p of [page, second]) {
      await p.reload();
      await expect(p).toHaveURL(/\/login/);
    }
    await other.close();
  });

  test("a person whose groups give no project is told so, with whom to ask, and is not signed in", async ({ page }, info) => {
    await page.goto("/login");
    await page.getByRole("link", { name: `Sign in with ${SSO_NAME}` }).click();
    await signInAtProvider(page, "nogroup", info);
    await expect(page.getByRole("heading", { name: "Sign-in not completed" })).toBeVisible();
    await expect(page.getByRole("alert")).toContainText("none of your groups gives access to a Koala project");
    await expect(page.getByText("Koala administrators:")).toBeVisible();
    await expectAccessible(page, info);
    await page.getByRole("link", { name: "Back to sign in" }).click();
    await expect(page).toHaveURL(/\/login$/);
    await page.goto("/dashboard");
    await expect(page).toHaveURL(/\/login/);
  });

  test("an admin maps a provider group to a project in the console; its people get in; the mapping is removed again", async ({
    page,
    browser,
    signIn,
  }, info) => {
    await signIn("admin");
    await page.goto("/admin/sign-in");
    await expect(page.getByRole("heading", { name: "Company sign-in" })).toBeVisible();
    await expect(page.getByRole("cell", { name: `${SSO_NAME} (e2e)` })).toBeVisible();
    await expectAccessible(page, info);
    const group = ssoNewGroup(info.project.name);
    await page.getByRole("textbox", { name: "Group" }).fill(group);
    await page.getByLabel("gives, in").selectOption({ label: SSO_PROJECT });
    await page.getByLabel("the role").selectOption("viewer");
    await page.getByRole("button", { name: "Add group" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Group added" })).toBeVisible();
    const row = page.getByRole("row").filter({ hasText: group });
    await expect(row).toContainText(SSO_PROJECT);
    // The same again is refused with a message, and nothing is added.
    await page.getByRole("textbox", { name: "Group" }).fill(group);
    await page.getByLabel("gives, in").selectOption({ label: SSO_PROJECT });
    await page.getByRole("button", { name: "Add group" }).click();
    await expect(page.getByText("This group already gives a role in this project.")).toBeVisible();
    await expect(page.getByRole("row").filter({ hasText: group })).toHaveCount(1);

    const other = await browser.newContext({ javaScriptEnabled: info.project.use.javaScriptEnabled !== false });
    const person = await other.newPage();
    await person.goto(`${info.project.use.baseURL}/login`);
    await person.getByRole("link", { name: `Sign in with ${SSO_NAME}` }).click();
    await signInAtProvider(person, "mapped", info);
    await expect(person).toHaveURL(/\/terms/);
    await other.close();

    await row.getByRole("button", { name: `Remove ${group} from ${SSO_PROJECT}` }).click();
    await expect(page.getByRole("status").filter({ hasText: "Group removed" })).toBeVisible();
    await expect(page.getByRole("row").filter({ hasText: group })).toHaveCount(0);
  });

  test("an admin adds a provider in the console, is told what is wrong first, and its link appears on the sign-in page", async ({
    page,
    signIn,
  }, info) => {
    const id = `c${info.project.name.replace(/[^a-z0-9]/g, "")}`;
    const name = `Console ${info.project.name}`;
    await signIn("admin");
    await page.goto("/admin/sign-in");
    await page.getByRole("link", { name: "Add a provider" }).click();
    await expect(page.getByRole("heading", { name: "Add a company sign-in provider" })).toBeVisible();
    await expectAccessible(page, info);
    await page.getByLabel("Id", { exact: true }).fill(id);
    await page.getByLabel("Name on the sign-in page").fill(name);
    await page.getByLabel("Issuer URL").fill(ssoIssuer());
    await page.getByLabel("Client id", { exact: true }).fill(`console-${id}`);
    await page.getByLabel("Client secret").fill("a-secret-for-the-console-test");
    await page.getByLabel("E-mail domains").fill("not a domain");
    await page.getByRole("button", { name: "Add provider" }).click();
    await expect(page.getByText('"not a domain" is not a domain name')).toBeVisible();
    // The server never sends the secret back: without JavaScript the new page's field is empty and it is typed again
    // (with it, the field still holds what was typed on this page).
    if (!hasJs(info)) {
      await expect(page.getByLabel("Client secret")).toHaveValue("");
      await page.getByLabel("Client secret").fill("a-secret-for-the-console-test");
    }
    await page.getByLabel("E-mail domains").fill(`${id}.test`);
    await page.getByRole("button", { name: "Add provider" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Provider added" })).toBeVisible();
    await expect(page.getByRole("link", { name: `Change ${name}` })).toBeVisible();

    await page.getByRole("link", { name: `Change ${name}` }).click();
    await expect(page.getByText("A secret is saved; leave this empty to keep it.")).toBeVisible();
    await expect(page.getByLabel("Client secret")).toHaveValue("");
    await page.context().clearCookies();
    await page.goto("/login");
    await expect(page.getByRole("link", { name: `Sign in with ${name}` })).toBeVisible();

    await signIn("admin");
    await page.goto(`/admin/sign-in/providers/${id}`);
    await page.getByRole("button", { name: `Remove ${name}` }).click();
    await expect(page.getByRole("status").filter({ hasText: "Provider removed" })).toBeVisible();
    await expect(page.getByRole("link", { name: `Change ${name}` })).toHaveCount(0);
  });
});
