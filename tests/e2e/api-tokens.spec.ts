import { request, type APIRequestContext, type Page, type TestInfo } from "@playwright/test";
import { expect, test } from "./fixtures";
import { expectAccessible, hasJs, projectId, tabTo, toast } from "./support";
import { boardsProject, secondProject } from "./users";

// The person who makes tokens here is searchAll's: a member of two projects (its board workshop and "Second search"),
// so a token limited to one of them has another to leave out. A token changes nothing the search tests look at.
const OWNER = "searchAll" as const;

/** A token name of its own per test and browser project. */
const tokenName = (info: TestInfo, what: string) => `${what} ${info.project.name} ${Date.now()}`;

/** The API as a script calls it: a request context of its own, with no cookie (and so no session) at all. */
const script = (baseURL: string) => request.newContext({ baseURL });

const newTokenForm = (page: Page) => page.getByRole("form", { name: "New token" });
const madeToken = (page: Page, name: string) => page.getByLabel(`Token “${name}” (shown once: copy it now)`, { exact: true });
const tokenRow = (page: Page, name: string) => page.getByRole("table", { name: "Your tokens" }).getByRole("row").filter({ hasText: name });
/** The cells of a token's row, by column: Name, Access, Projects, Created, Expires, Last used. */
const cell = (page: Page, name: string, column: number) => tokenRow(page, name).getByRole("cell").nth(column);

const SECRET = /^koala_pat_[A-Za-z0-9_-]{43}$/;

async function projectsWith(api: APIRequestContext, secret: string) {
  return api.get("/api/v1/projects", { headers: { Authorization: `Bearer ${secret}` } });
}

test.describe("personal access tokens", () => {
  test("keyboard only: Profile → Manage access tokens makes a read-only token for one project, shown once; the API lists only that project, and answers 401 once it is revoked", async ({
    page,
    signIn,
    db,
    server,
  }, info) => {
    await signIn(OWNER);
    const only = secondProject(info.project.name);
    const left = boardsProject(OWNER, info.project.name);
    const name = tokenName(info, "Only one");

    await page.goto("/profile");
    await tabTo(page, page.getByRole("link", { name: "Manage access tokens" }));
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/profile\/tokens$/);
    await expect(page.getByRole("heading", { name: "Access tokens", level: 1 })).toBeVisible();

    const form = newTokenForm(page);
    await tabTo(page, form.getByLabel("Name", { exact: true }));
    await page.keyboard.type(name);
    await expect(form.getByRole("radio", { name: "Read", exact: true })).toBeChecked();
    const all = form.getByRole("radio", { name: /^All my projects/ });
    await expect(all).toBeChecked();
    await tabTo(page, all);
    await page.keyboard.press("ArrowDown");
    await expect(form.getByRole("radio", { name: "Only these:" })).toBeChecked();
    // The owner's other project is offered too: the token is to leave it out.
    await expect(form.getByRole("checkbox", { name: left, exact: true })).not.toBeChecked();
    const chosen = form.getByRole("checkbox", { name: only, exact: true });
    await tabTo(page, chosen);
    await page.keyboard.press("Space");
    await expect(chosen).toBeChecked();
    await tabTo(page, form.getByRole("button", { name: "Create token" }));
    await page.keyboard.press("Enter");

    const made = madeToken(page, name);
    await expect(made).toHaveValue(SECRET);
    await expect(made).not.toBeEditable();
    const secret = await made.inputValue();
    await expect(cell(page, name, 1)).toHaveText("Read");
    await expect(cell(page, name, 2)).toHaveText(only);

    const api = await script(server.baseURL);
    try {
      const listed = await projectsWith(api, secret);
      expect(listed.status()).toBe(200);
      expect(await listed.json()).toEqual({ items: [{ id: await projectId(db, only), name: only }] });
      // Neither no token nor the browser's session cookie is a credential on the API.
      expect((await api.get("/api/v1/projects")).status()).toBe(401);
      expect((await page.request.get("/api/v1/projects")).status()).toBe(401);

      // Loaded again, the page lists the token with its last use, and the secret is gone for good.
      await page.goto("/profile/tokens");
      await expect(cell(page, name, 5)).toContainText(" from ");
      await expect(page.getByLabel(/shown once: copy it now/)).toHaveCount(0);
      expect(await page.content()).not.toContain(secret);

      await tokenRow(page, name)
        .getByRole("button", { name: `Revoke ${name}`, exact: true })
        .click();
      await expect(toast(page)).toContainText("Token revoked");
      await expect(page).toHaveURL(/\/profile\/tokens$/);
      await expect(cell(page, name, 0)).toHaveText(`${name} (Revoked)`);
      await expect(tokenRow(page, name).getByRole("button")).toHaveCount(0);

      const refused = await projectsWith(api, secret);
      expect(refused.status()).toBe(401);
      expect(refused.headers()["www-authenticate"]).toBe('Bearer realm="koala", error="invalid_token"');
      expect(await refused.json()).toMatchObject({ status: 401, detail: "The token is unknown, revoked or expired." });
    } finally {
      await api.dispose();
    }
  });

  test("the new-token form refuses an empty name and “Only these:” with no project ticked, both messages at once (with JavaScript before anything is sent), then the projects alone, and takes it once a project is ticked", async ({
    page,
    signIn,
  }, info) => {
    await signIn(OWNER);
    const only = secondProject(info.project.name);
    const name = tokenName(info, "Refused first");
    await page.goto("/profile/tokens");
    const sent: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname.startsWith("/profile/tokens")) sent.push(r.url());
    });
    const form = newTokenForm(page);
    const nameField = form.getByLabel("Name", { exact: true });
    const projects = form.getByRole("group", { name: "Projects" });

    await projects.getByRole("radio", { name: "Only these:" }).check();
    await form.getByRole("button", { name: "Create token" }).click();
    await expect(nameField).toHaveAccessibleDescription(/^Give the token a name/);
    await expect(nameField).toHaveAttribute("aria-invalid", "true");
    await expect(form.getByText("Give the token a name", { exact: true })).toBeVisible();
    await expect(projects).toHaveAccessibleDescription("Choose at least one project");
    expect(sent).toHaveLength(hasJs(info) ? 0 : 1);
    await expectAccessible(page, info);

    await form.getByLabel("Name", { exact: true }).fill(name);
    await form.getByRole("button", { name: "Create token" }).click();
    await expect(projects).toHaveAccessibleDescription("Choose at least one project");
    await expect(form.getByText("Choose at least one project", { exact: true })).toBeVisible();
    await expect(form.getByText("Give the token a name", { exact: true })).toHaveCount(0);
    // Without JavaScript the answer keeps what was typed and chosen.
    await expect(nameField).toHaveValue(name);
    await expect(projects.getByRole("radio", { name: "Only these:" })).toBeChecked();
    expect(sent).toHaveLength(hasJs(info) ? 0 : 2);
    await expect(page.getByRole("cell", { name, exact: true })).toHaveCount(0);
    await expectAccessible(page, info);

    await projects.getByRole("checkbox", { name: only, exact: true }).check();
    await form.getByRole("button", { name: "Create token" }).click();
    await expect(madeToken(page, name)).toHaveValue(SECRET);
    await expect(form.getByText("Choose at least one project", { exact: true })).toHaveCount(0);
    await expect(cell(page, name, 2)).toHaveText(only);
    expect(sent).toHaveLength(hasJs(info) ? 1 : 3);
  });

  test("the access tokens page passes axe with a token just made (read and write, all projects, one year) and listed", async ({
    page,
    signIn,
  }, info) => {
    await signIn(OWNER);
    const name = tokenName(info, "Everything");
    await page.goto("/profile/tokens");
    const form = newTokenForm(page);
    await form.getByLabel("Name", { exact: true }).fill(name);
    await form.getByRole("radio", { name: /^Read and write/ }).check();
    await form.getByLabel("Expires after", { exact: true }).selectOption({ label: "1 year" });
    await form.getByRole("button", { name: "Create token" }).click();
    await expect(madeToken(page, name)).toHaveValue(SECRET);
    await expect(cell(page, name, 1)).toHaveText("Read and write");
    await expect(cell(page, name, 2)).toHaveText("All my projects");
    await expect(cell(page, name, 5)).toHaveText("Never");
    // Created and Expires read "YYYY-MM-DD HH:MM UTC", one year (365 days) apart.
    const at = async (column: number) => Date.parse((await cell(page, name, column).innerText()).replace(" UTC", "Z").replace(" ", "T"));
    expect((await at(4)) - (await at(3))).toBe(365 * 86_400_000);
    await expectAccessible(page, info);
  });
});

test.describe("API reference", () => {
  test("/api/docs is public and rendered on the server: a heading for every operation of /api/v1/openapi.json, and axe passes", async ({
    page,
    server,
  }, info) => {
    // axe reads every one of the reference's ~2,000 elements (13–20 s on an idle machine): room for a busy one.
    test.slow();
    const api = await script(server.baseURL);
    const answer = await api.get("/api/v1/openapi.json");
    expect(answer.status()).toBe(200);
    const doc = (await answer.json()) as { info: { title: string }; paths: Record<string, Record<string, unknown>> };
    await api.dispose();
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} /api/v1${path}`),
    );
    expect(operations).toContain("GET /api/v1/projects");

    // Signed out: the profile's pages send this visitor to sign in; the reference does not.
    await page.goto("/profile/tokens");
    await expect(page).toHaveURL(/\/login/);
    const response = await page.goto("/api/docs");
    expect(response?.status()).toBe(200);
    await expect(page).toHaveURL(/\/api\/docs$/);
    await expect(page.getByRole("heading", { level: 1 })).toContainText(doc.info.title);
    for (const operation of operations) await expect(page.getByRole("heading", { name: operation, exact: true, level: 3 })).toBeVisible();
    await expect(page.getByRole("link", { name: "Access tokens", exact: true })).toHaveAttribute("href", "/profile/tokens");
    await expectAccessible(page, info);
  });
});
