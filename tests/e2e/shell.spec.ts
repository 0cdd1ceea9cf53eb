import type { Page, Request, Route } from "@playwright/test";
import { expect, test } from "./fixtures";
import { code, expectAccessible, hasJs, requestLink, tabTo, userFor, PASSWORD } from "./support";

test("unknown paths show the 404 page with status 404 and a way back", async ({ page }) => {
  const response = await page.goto("/no/such/page");
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await page.getByRole("link", { name: "Back to dashboard" }).click();
  await expect(page).toHaveURL(/\/login$/);
  const direct = await page.goto("/404");
  expect(direct?.status()).toBe(200);
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
});

test("old entry points redirect to the dashboard", async ({ request }) => {
  for (const p of ["/", "/home", "/index", "/verify-email"]) {
    const res = await request.get(p, { maxRedirects: 0 });
    expect(res.status(), p).toBe(302);
    expect(res.headers().location, p).toBe("/dashboard");
  }
});

test("a guarded page sends to sign-in and back afterwards", async ({ page }, info) => {
  await page.goto("/dashboard?view=boards");
  await expect(page).toHaveURL(/\/login\?redirectTo=%2Fdashboard%3Fview%3Dboards$/);
  await page.getByRole("link", { name: "Sign in with password and MFA code instead" }).click();
  // The form is replaced by the navigation: wait for it before typing.
  await expect(page).toHaveURL(/method=password/);
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
  await page.getByLabel("Email", { exact: true }).fill(userFor(info, "redirect"));
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByLabel("Code", { exact: true }).fill(code());
  await page.getByRole("button", { name: "Login" }).click();
  await expect(page).toHaveURL(/\/dashboard\?view=boards$/);
});

test("the theme switches from the profile menu and is rendered by the server", async ({ page, signIn }) => {
  await signIn("theme");
  await page.goto("/dashboard");
  await expect(page.locator("html")).toHaveClass("lightmode");
  await page.getByLabel(/profile menu/i).click();
  await page.getByRole("button", { name: "Dark Mode" }).click();
  await expect(page.locator("html")).toHaveClass("darkmode");
  await expect(page).toHaveURL(/\/dashboard$/);
  const cookies = await page.context().cookies();
  expect(cookies.find((c) => c.name === "theme")?.value).toBe("darkmode");
  await page.reload();
  await expect(page.locator("html")).toHaveClass("darkmode");
  await page.getByLabel(/profile menu/i).click();
  await page.getByRole("button", { name: "Light Mode" }).click();
  await expect(page.locator("html")).toHaveClass("lightmode");
});

test("logout from the profile menu ends the session", async ({ page, signIn }) => {
  await signIn("logout");
  await page.goto("/dashboard");
  await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
  await page.getByLabel(/profile menu/i).click();
  await page.getByRole("button", { name: "Logout" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole("status").filter({ hasText: "You have been logged out." })).toBeVisible();
  await page.goto("/dashboard");
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByText("You have been logged out.")).toHaveCount(0); // a flash shows once
});

test("keyboard only: sign in, open the profile menu and log out", async ({ page }, info) => {
  await page.goto("/login?method=password");
  await tabTo(page, page.getByLabel("Email", { exact: true }));
  await page.keyboard.type(userFor(info, "keyboard"));
  await page.keyboard.press("Tab");
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press("Tab");
  await page.keyboard.type(code());
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/dashboard$/);
  // The dashboard rendered (with JavaScript the URL can change a moment before the new page is on screen, and a Tab
  // pressed in between would move focus within the old one).
  await expect(page.getByLabel(/profile menu/i)).toBeVisible();
  // Skip link first, then the logo, the search box, its type and its button, the projects link, then the profile menu.
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
  await tabTo(page, page.getByLabel(/profile menu/i), 6);
  await page.keyboard.press("Enter");
  await expect(page.getByRole("link", { name: "View All Boards" })).toBeVisible();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Profile Settings" })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "View All Boards" })).toBeFocused();
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await expect(page.getByRole("button", { name: "Logout" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/login$/);
});

test("a tab whose session ended goes to sign-in: by itself with JavaScript, at the next request without", async ({
  page,
  context,
  signIn,
}, info) => {
  await signIn("watch");
  await page.goto("/dashboard");
  await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
  // Sign out elsewhere (another tab of the same browser).
  const other = await context.newPage();
  await other.goto("/dashboard");
  await other.getByLabel(/profile menu/i).click();
  await other.getByRole("button", { name: "Logout" }).click();
  // With JavaScript the 5-second check notices; without it, the next request does.
  if (!hasJs(info)) await page.reload();
  // The check runs every 5 s: allow a few rounds on a loaded machine.
  await expect(page).toHaveURL(/\/login(\?redirectTo=%2Fdashboard)?$/, { timeout: 20_000 });
});

/** Holds the page's next request to `pattern` until `release()`; `seen` resolves when it is made, `settled` when it has an answer or was dropped. */
function hold(page: Page, pattern: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let seen!: () => void;
  const made = new Promise<void>((resolve) => (seen = resolve));
  const settled = new Promise<void>((resolve) => {
    const done = (request: Request) => void (new URL(request.url()).pathname === pattern && resolve());
    page.on("requestfinished", done);
    page.on("requestfailed", done);
  });
  void page.route(
    (url) => url.pathname === pattern,
    async (route: Route) => {
      seen();
      await released;
      await route.continue().catch(() => {}); // the page dropped it meanwhile
    },
    { times: 1 },
  );
  return { made, settled, release };
}

// The session check runs every few seconds; one under way while the user signs out answers 401. That answer is the
// sign-out's own doing and must not send the sign-in page to /login?redirectTo=… (it once did, now and then).
for (const when of ["after", "during"] as const) {
  test(
    `a session check that answers ${when} the sign-out's navigation leaves the sign-in page alone`,
    { tag: "@js-only" },
    async ({ page, signIn }) => {
      await signIn(when === "after" ? "watchAfter" : "watchDuring");
      await page.goto("/dashboard");
      await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
      const navigations: string[] = [];
      page.on("request", (request) => void (request.isNavigationRequest() && navigations.push(request.url())));
      const check = hold(page, "/auth/check");
      await check.made;
      const loginData = when === "during" ? hold(page, "/login.data") : null;
      await page.getByLabel(/profile menu/i).click();
      await page.getByRole("button", { name: "Logout" }).click();
      if (loginData) {
        await loginData.made; // signed out, the sign-in page not yet shown
        check.release();
        await check.settled;
        loginData.release();
      }
      await expect(page).toHaveURL(/\/login$/);
      if (!loginData) {
        check.release();
        await check.settled;
      }
      await page.waitForTimeout(500); // room for a wrong navigation to start: it would follow the answer at once
      await expect(page).toHaveURL(/\/login$/);
      expect(navigations.filter((url) => url.includes("redirectTo"))).toEqual([]);
    },
  );
}

test("the login pages and the 404 page pass axe", async ({ page }, info) => {
  await page.goto("/login");
  await expectAccessible(page, info);
  await page.goto("/login?method=password");
  await expectAccessible(page, info);
  await page.getByRole("button", { name: "Login" }).click();
  await expect(page.getByText("Please enter a password.")).toBeVisible();
  await expectAccessible(page, info);
  await page.goto("/no/such/page");
  await expectAccessible(page, info);
});

test("error pages are titled by their message: /image without an id ('Image is undefined'), an unknown /pending/… (axe)", async ({
  page,
  signIn,
}, info) => {
  const unknown = await page.goto("/pending/foo");
  expect(unknown?.status()).toBe(404);
  await expect(page).toHaveTitle("Page not found | Koala");
  await expectAccessible(page, info);
  await signIn("notfound");
  const bare = await page.goto("/image");
  expect(bare?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Image is undefined" })).toBeVisible();
  await expect(page).toHaveTitle("Image is undefined | Koala");
  await expectAccessible(page, info);
});

test("the link-sent, sign-in link and MFA code pages pass axe", async ({ page }, info) => {
  const link = await requestLink(page, userFor(info, "axe"));
  await expectAccessible(page, info);
  await page.goto(link);
  await expectAccessible(page, info);
  if (!hasJs(info)) await page.getByRole("button", { name: "Continue to Koala" }).click();
  await expect(page).toHaveURL(/\/auth\/verify$/);
  await expectAccessible(page, info);
  await page.getByLabel("Code", { exact: true }).fill(code());
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
});

test("the dashboard and its open profile menu pass axe", async ({ page, signIn }, info) => {
  await signIn("axe");
  await page.goto("/dashboard");
  await expectAccessible(page, info);
  await page.getByLabel(/profile menu/i).click();
  await expect(page.getByRole("button", { name: "Logout" })).toBeVisible();
  await expectAccessible(page, info);
});

test("security headers: an enforced CSP with a nonce, nosniff, no framing", async ({ request }) => {
  const res = await request.get("/login");
  const csp = res.headers()["content-security-policy"]!;
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{20,}'/);
  for (const d of ["default-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"]) expect(csp).toContain(d);
  expect(res.headers()["x-content-type-options"]).toBe("nosniff");
  expect(res.headers()["referrer-policy"]).toBe("same-origin");
  const html = await res.text();
  const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
  for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toContain(`nonce="${nonce}"`);
  expect((await request.get("/login")).headers()["content-security-policy"]).not.toBe(csp);
});

test("a cross-site form post is refused", async ({ request }) => {
  const res = await request.post("/login", {
    form: { intent: "magic-link", email: "x@e2e.test" },
    headers: { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" },
  });
  expect(res.status()).toBe(403);
});
