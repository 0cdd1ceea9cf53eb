import { expect, test } from "./fixtures";
import {
  code,
  expectAccessible,
  expectCodeField,
  expireLinks,
  fillPasswordForm,
  followLink,
  hasJs,
  PASSWORD,
  requestLink,
  signInWithPassword,
  userFor,
  waitForMail,
} from "./support";

test.describe("magic link", () => {
  test("a link read from the mail signs the person in and lands on the dashboard", { tag: "@core" }, async ({ page }, info) => {
    const email = userFor(info, "link");
    const link = await requestLink(page, email);
    await page.getByRole("button", { name: "Back" }).click();
    await expect(page.getByRole("button", { name: "Submit" })).toBeVisible();
    await followLink(page, info, link);
    await expect(page).toHaveURL(/\/dashboard$/);
    await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
    await expect(page).toHaveTitle("Dashboard | Koala");
  });

  test("opening the link (as a mail scanner would) does not use it", async ({ page, request }, info) => {
    const email = userFor(info, "reused");
    const link = await requestLink(page, email);
    const scanned = await request.get(link);
    expect(scanned.status()).toBe(200);
    await followLink(page, info, link);
    await expect(page).toHaveURL(/\/dashboard$/);
    // Used once: the same link again fails, with a way back.
    await page.context().clearCookies();
    await followLink(page, info, link);
    await expect(page.getByText("This sign-in link is invalid, has expired or was already used.")).toBeVisible();
    await page.getByRole("link", { name: "Back to sign in" }).click();
    await expect(page).toHaveURL(/\/login$/);
  });

  test("an expired link and a link voided by a newer one are refused", async ({ page, db }, info) => {
    const email = userFor(info, "expired");
    const older = await requestLink(page, email);
    const newer = await requestLink(page, email);
    await followLink(page, info, older);
    await expect(page.getByText("This sign-in link is invalid, has expired or was already used.")).toBeVisible();
    await expireLinks(db, email);
    await followLink(page, info, newer);
    await expect(page.getByText("This sign-in link is invalid, has expired or was already used.")).toBeVisible();
    await page.goto("/dashboard");
    await expect(page).toHaveURL(/\/login$/);
  });

  test("an unknown address gets the same answer on screen and a mail saying there is no account (no sign-in link)", async ({
    page,
  }, info) => {
    const email = `nobody-${info.project.name}-${Date.now()}@e2e.test`;
    const since = Date.now() - 1;
    await page.goto("/login");
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByRole("button", { name: "Submit" }).click();
    await expect(page.getByText("The link has been sent please check your email:")).toBeVisible();
    const mail = await waitForMail(email, since);
    expect(mail).toContain("There is no Koala account for this address");
    expect(mail).not.toMatch(/\/auth\//);
  });

  test("a user with TOTP enrolled gives the code before the session starts", async ({ page }, info) => {
    const email = userFor(info, "linkTotp");
    const link = await requestLink(page, email);
    await followLink(page, info, link);
    await expect(page).toHaveURL(/\/auth\/verify$/);
    await page.goto("/dashboard");
    await expect(page).toHaveURL(/\/login$/); // no session yet
    await page.goBack();
    await page.goto("/auth/verify");
    await page.getByLabel("Code", { exact: true }).fill("000000" === code() ? "111111" : "000000");
    await page.getByRole("button", { name: "Verify" }).click();
    await expect(page.getByText("Invalid credentials.")).toBeVisible();
    await page.getByLabel("Code", { exact: true }).fill(code());
    await page.getByRole("button", { name: "Verify" }).click();
    await expect(page).toHaveURL(/\/dashboard$/);
  });

  test("validation uses the spec's message, on the server too", async ({ page }) => {
    await page.goto("/login");
    await page.getByLabel("Email", { exact: true }).fill("not-an-address");
    await page.getByRole("button", { name: "Submit" }).click();
    await expect(page.getByText("Please enter a valid email address.")).toBeVisible();
    await expect(page.getByLabel("Email", { exact: true })).toHaveAttribute("aria-invalid", "true");
  });

  test("the sixth request for one address within the window is refused with 429", async ({ page }, info) => {
    const email = userFor(info, "ratelimit");
    for (let i = 0; i < 5; i++) {
      await page.goto("/login");
      await page.getByLabel("Email", { exact: true }).fill(email);
      await page.getByRole("button", { name: "Submit" }).click();
      await expect(page.getByText("The link has been sent please check your email:")).toBeVisible();
    }
    await page.goto("/login");
    await page.getByLabel("Email", { exact: true }).fill(email);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes("/login")),
      page.getByRole("button", { name: "Submit" }).click(),
    ]);
    expect(response.status()).toBe(429);
    await expect(page.getByText(/Too many sign-in attempts\. Please wait \d+ minutes? and try again\./)).toBeVisible();
  });
});

test.describe("password and MFA code", () => {
  test("signs in and lands on the dashboard", async ({ page }, info) => {
    await signInWithPassword(page, userFor(info, "password"));
    await expect(page).toHaveURL(/\/dashboard$/);
    await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
  });

  test("a wrong code, a wrong password and an unknown address all say 'Invalid credentials.'", async ({ page }, info) => {
    const email = userFor(info, "wrong");
    const wrong = code() === "123456" ? "654321" : "123456";
    // Each answer is checked by itself (with JavaScript the message of the attempt before stays on screen).
    expect((await signInWithPassword(page, email, wrong)).status()).toBe(400);
    await expect(page.getByText("Invalid credentials.")).toBeVisible();
    expect((await fillPasswordForm(page, email, `${PASSWORD}x`, code())).status()).toBe(400);
    await expect(page.getByText("Invalid credentials.")).toBeVisible();
    expect((await fillPasswordForm(page, `ghost-${info.project.name}@e2e.test`, PASSWORD, code())).status()).toBe(400);
    await expect(page.getByText("Invalid credentials.")).toBeVisible();
    await page.goto("/dashboard");
    await expect(page).toHaveURL(/\/login$/);
  });

  test("a code already used is refused", async ({ browser, page }, info) => {
    const email = userFor(info, "replay");
    const used = code(1);
    await signInWithPassword(page, email, used);
    await expect(page).toHaveURL(/\/dashboard$/);
    const other = await browser.newPage({ javaScriptEnabled: hasJs(info) });
    await signInWithPassword(other, email, used);
    await expect(other.getByText("Invalid credentials.")).toBeVisible();
    await other.close();
  });

  test("every code field of signing in takes digits on a numeric keypad and refuses letters with the spec's message", async ({
    page,
  }, info) => {
    const email = userFor(info, "codeSignIn");
    await page.goto("/login?method=password");
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await expectCodeField(page, info, () => page.getByRole("button", { name: "Login" }).click());
    await expectAccessible(page, info);

    // The code after an e-mailed link.
    await followLink(page, info, await requestLink(page, email));
    await expect(page).toHaveURL(/\/auth\/verify$/);
    await expectCodeField(page, info, () => page.getByRole("button", { name: "Verify" }).click());
    await page.getByLabel("Code", { exact: true }).fill(code());
    await page.getByRole("button", { name: "Verify" }).click();
    await expect(page).toHaveURL(/\/dashboard$/);
  });

  test("the code field shows the spec's messages and keeps only digits and spaces", async ({ page }, info) => {
    await page.goto("/login?method=password");
    await page.getByRole("button", { name: "Login" }).click();
    await expect(page.getByText("Please enter a valid email address.")).toBeVisible();
    await expect(page.getByText("Please enter a password.")).toBeVisible();
    await expect(page.getByText("Please enter a valid MFA code.")).toBeVisible();
    if (hasJs(info)) {
      await page.getByLabel("Code", { exact: true }).pressSequentially("12a 3-4");
      await expect(page.getByLabel("Code", { exact: true })).toHaveValue("12 34");
    }
  });
});
