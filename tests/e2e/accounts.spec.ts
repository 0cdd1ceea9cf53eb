import type { Page, TestInfo } from "@playwright/test";
import { totpCode } from "~/lib/totp.server";
import { expect, test } from "./fixtures";
import {
  expectAccessible,
  expectCodeField,
  fillPasswordForm,
  followLink,
  hasJs,
  jpegFile,
  linkIn,
  PASSWORD,
  storedApplication,
  tabTo,
  toast,
  userFor,
  waitForMail,
} from "./support";

/** A fresh applicant's address per test and browser project. */
const applicant = (info: TestInfo, what: string) => `${what}-${info.project.name}-${Date.now()}@e2e.test`;

async function fillRegistration(page: Page, values: { email: string; mobile: string }) {
  await page.getByLabel("Name", { exact: true }).fill("Ada");
  await page.getByLabel("Surname", { exact: true }).fill("Lovelace");
  await page.getByLabel("Country code", { exact: true }).selectOption("GB");
  await page.getByLabel("Mobile", { exact: true }).fill(values.mobile);
  await page.getByLabel("Country", { exact: true }).selectOption("GB");
  await page.getByLabel("Timezone", { exact: true }).selectOption({ label: "Europe/London (UTC+0)" });
  await page.getByLabel("Language", { exact: true }).selectOption("en");
  await page.getByLabel("Org unit", { exact: true }).selectOption("Research");
  await page.getByLabel("Email", { exact: true }).fill(values.email);
  await page.getByLabel("Projects", { exact: true }).fill("Acme");
  await page.getByLabel("What will you use the system for?").fill("Shelf studies");
}

test.describe("registration", () => {
  test("the sign-in page leads to registration by keyboard, with either way of signing in, and registration back", async ({
    page,
  }, info) => {
    for (const method of ["link", "password"]) {
      await page.goto(`/login?method=${method}`);
      const apply = page.getByRole("link", { name: "Apply for one" });
      await expect(apply).toBeVisible();
      await tabTo(page, apply);
      await page.keyboard.press("Enter");
      await expect(page).toHaveURL(/\/pending$/);
      await expect(page.getByRole("heading", { name: "Registration" })).toBeVisible();
    }
    await expectAccessible(page, info);
    await page.getByRole("link", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/login$/);
    await expectAccessible(page, info);
  });

  test("each validation message, the confirm step, Edit keeps the values, and the success view", async ({ page }, info) => {
    const email = applicant(info, "ada");
    await page.goto("/pending");
    await expect(page.getByRole("heading", { name: "Registration" })).toBeVisible();
    await expectAccessible(page, info);
    // The IANA zones by their current names (Asia/Kolkata, never the legacy Asia/Calcutta).
    const zones = await page.getByLabel("Timezone", { exact: true }).locator("option").allTextContents();
    expect(zones).toEqual(expect.arrayContaining(["Asia/Kolkata (UTC+5:30)", "Asia/Kathmandu (UTC+5:45)", "Europe/Kyiv (UTC+2)"]));
    expect(zones.filter((z) => /Calcutta|Katmandu|Kiev/.test(z))).toEqual([]);

    await page.getByRole("button", { name: "Submit" }).click();
    await expect(page.getByText("*Please fill in all fields")).toBeVisible();

    await fillRegistration(page, { email: "not-an-address", mobile: "821234567" });
    await page.getByRole("button", { name: "Submit" }).click();
    // Under the field (its description) and in the summary at the top.
    await expect(page.getByLabel("Email", { exact: true })).toHaveAccessibleDescription("*Invalid email format");
    await expect(page.getByRole("link", { name: "*Invalid email format" })).toBeVisible();

    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel("Mobile", { exact: true }).fill("1234");
    await page.getByRole("button", { name: "Submit" }).click();
    await expect(page.getByLabel("Mobile", { exact: true })).toHaveAccessibleDescription(/^\*Invalid mobile format/);

    await page.getByLabel("Mobile", { exact: true }).fill("821234567");
    // With JavaScript the field keeps digits only and shows them in groups of 2-3-4 (without, the server does).
    if (hasJs(info)) await expect(page.getByLabel("Mobile", { exact: true })).toHaveValue("82 123 4567");
    await page.getByRole("button", { name: "Submit" }).click();
    const confirm = hasJs(info) ? page.getByRole("dialog", { name: "Confirm your application" }) : page.getByRole("main");
    await expect(confirm.getByText("Confirm your application")).toBeVisible();
    await expect(confirm.getByText(email)).toBeVisible();
    await expectAccessible(page, info);

    await confirm.getByRole("button", { name: "Edit" }).click();
    await expect(page.getByLabel("Email", { exact: true })).toHaveValue(email);
    await expect(page.getByLabel("Org unit", { exact: true })).toHaveValue("Research");

    const since = Date.now() - 1;
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByRole("button", { name: "Confirm" }).click();
    await expect(page).toHaveURL(/\/pending\/submitted$/);
    await expect(page.getByText("Your application has been submitted successfully.")).toBeVisible();
    await expectAccessible(page, info);
    expect(await waitForMail(email, since)).toContain("Thank you for applying");
    await page.getByRole("link", { name: "BACK" }).click();
    await expect(page).toHaveURL(/\/login$/);
  });

  test("a refused form opens on an error summary at the top that links to each field; the mobile keeps its digits, grouped 2-3-4", async ({
    page,
  }, info) => {
    await page.goto("/pending");
    const summary = page.locator("#registration-summary");
    await expect(summary).toHaveCount(0);
    // Nothing filled: the spec's one message leads to the first empty field.
    await page.getByRole("button", { name: "Submit" }).click();
    await expect(summary).toBeFocused();
    await expect(summary.getByRole("heading", { name: "There is a problem" })).toBeVisible();
    await expect(summary.getByRole("link", { name: "*Please fill in all fields" })).toHaveAttribute("href", "#registration-name");

    // Errors far below the fold: each is in the summary, focused at the top of the page, and each link leads to its field.
    await fillRegistration(page, { email: "not-an-address", mobile: "82ab1234567" });
    await page.getByRole("button", { name: "Submit" }).click();
    await expect(summary).toBeFocused();
    await expect(summary).toBeInViewport();
    const email = summary.getByRole("link", { name: "*Invalid email format" });
    await expect(email).toHaveAttribute("href", "#registration-email");
    // With JavaScript the letters never reach the field; without, the server refuses them and gives back the digits.
    if (!hasJs(info))
      await expect(summary.getByRole("link", { name: "*Invalid mobile format" })).toHaveAttribute("href", "#registration-mobile");
    await expect(page.getByLabel("Mobile", { exact: true })).toHaveValue("82 123 4567");
    await expectAccessible(page, info);
    await page.keyboard.press("Tab");
    await expect(summary.getByRole("link").first()).toBeFocused();
    await email.click();
    await expect(page.getByLabel("Email", { exact: true })).toBeFocused();

    await page.getByLabel("Email", { exact: true }).fill(applicant(info, "summary"));
    await page.getByRole("button", { name: "Submit" }).click();
    const confirm = hasJs(info) ? page.getByRole("dialog", { name: "Confirm your application" }) : page.getByRole("main");
    await expect(confirm.getByText("United Kingdom (+44) 82 123 4567")).toBeVisible();
    await expect(summary).toHaveCount(0);
  });

  test("an address that already has an account sees the same success view, and its owner is told by e-mail", async ({ page }, info) => {
    const email = userFor(info, "profile");
    await page.goto("/pending");
    await fillRegistration(page, { email, mobile: "821234567" });
    const since = Date.now() - 1;
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByRole("button", { name: "Confirm" }).click();
    await expect(page.getByText("Your application has been submitted successfully.")).toBeVisible();
    expect((await waitForMail(email, since)).replace(/=\r?\n/g, "")).toContain("but it already has one");
  });
});

test.describe("admin console", () => {
  test(
    "approve an application with a role; the new user signs in from the e-mailed link",
    { tag: "@core" },
    async ({ page, browser, signIn }, info) => {
      const email = applicant(info, "grace");
      await storedApplication(email);
      await signIn("admin");
      await page.goto("/admin");
      await expectAccessible(page, info);
      await page
        .getByRole("row", { name: new RegExp(email) })
        .getByRole("link", { name: "Grace Hopper" })
        .click();
      await expect(page.getByRole("heading", { name: "Application of Grace Hopper" })).toBeVisible();
      // Stored as its digits, shown as everywhere else: grouped 2-3-4.
      await expect(page.getByText("+1 82 123 4567")).toBeVisible();
      await expectAccessible(page, info);
      await page.getByLabel("E2E Project", { exact: true }).selectOption("editor");
      const since = Date.now() - 1;
      await page.getByRole("button", { name: "Approve" }).click();
      await expect(toast(page)).toContainText(`${email} approved`);
      await expect(page.getByRole("row", { name: new RegExp(email) })).toHaveCount(0);

      const link = linkIn(await waitForMail(email, since));
      const context = await browser.newContext({ javaScriptEnabled: hasJs(info) });
      const newcomer = await context.newPage();
      await followLink(newcomer, info, link);
      await expect(newcomer).toHaveURL(/\/terms/);
      await newcomer.getByRole("button", { name: "Yes" }).click();
      await expect(newcomer.getByRole("heading", { name: "Dashboard" })).toBeVisible();
      await newcomer.goto("/all-clients");
      await expect(newcomer.getByRole("link", { name: /E2E Project/ })).toBeVisible();
      await context.close();
    },
  );

  test("approval preselects the projects the applicant named, with the viewer role, and names what matched none", async ({
    page,
    signIn,
    db,
  }, info) => {
    const email = applicant(info, "named");
    const id = await storedApplication(email, "e2e  project; Nowhere Inc");
    await signIn("admin");
    await page.goto(`/admin/registrations/${id}`);
    const asked = page.getByLabel("E2E Project", { exact: true });
    await expect(asked).toHaveValue("viewer");
    // First in the list, and every other project left at No access.
    await expect(page.getByRole("row").nth(1)).toContainText("E2E Project");
    const roles = await page.locator('select[name^="role-"]').evaluateAll((selects) => selects.map((s) => (s as HTMLSelectElement).value));
    expect(roles.length).toBeGreaterThan(1);
    expect(roles.filter((role) => role !== "")).toEqual(["viewer"]);
    await expect(page.getByText("Asked for, but no project has this name: Nowhere Inc")).toBeVisible();
    await expectAccessible(page, info);
    await page.getByRole("button", { name: "Approve" }).click();
    await expect(toast(page)).toContainText(`${email} approved`);
    const memberships = await db
      .selectFrom("project_members as m")
      .innerJoin("users as u", "u.id", "m.user_id")
      .innerJoin("projects as p", "p.id", "m.project_id")
      .select(["p.name", "m.role"])
      .where("u.email", "=", email)
      .execute();
    expect(memberships).toEqual([{ name: "E2E Project", role: "viewer" }]);
  });

  test("reject an application with a reason, which is e-mailed", async ({ page, signIn }, info) => {
    const email = applicant(info, "rejected");
    const id = await storedApplication(email);
    await signIn("admin");
    await page.goto(`/admin/registrations/${id}`);
    await page.getByLabel("Reason (optional, e-mailed to the applicant)").fill("Please apply through your team lead.");
    const since = Date.now() - 1;
    await page.getByRole("button", { name: "Reject" }).click();
    await expect(toast(page)).toContainText("Application rejected");
    expect(await waitForMail(email, since)).toContain("Please apply through your team lead.");
    await page.goto(`/admin/registrations/${id}`);
    await expect(page.getByText("Application not found")).toBeVisible();
  });

  test("disabling a user ends their open session at once", { tag: "@core" }, async ({ page, browser, signIn }, info) => {
    const context = await browser.newContext({ javaScriptEnabled: hasJs(info) });
    const victim = await context.newPage();
    const target = await signIn("disabled", context);
    await victim.goto("/dashboard");
    await expect(victim.getByRole("heading", { name: "Dashboard" })).toBeVisible();

    await signIn("admin");
    await page.goto(`/admin/users?q=${encodeURIComponent(target.email)}`);
    await expectAccessible(page, info);
    await page.getByRole("link", { name: "E2E disabled" }).click();
    await expectAccessible(page, info);
    await page.getByRole("button", { name: "Disable user" }).click();
    await expect(toast(page)).toContainText("User disabled");

    // With JavaScript the tab's own session check (every 5 s) may already be taking it to /login: a reload racing
    // that navigation is aborted (Chromium words it three ways), and either way the tab must end on /login.
    await victim.reload().catch((error: unknown) => {
      if (!hasJs(info) || !/ERR_ABORTED|frame was detached|Not attached to an active page/.test(String(error))) throw error;
    });
    await expect(victim).toHaveURL(/\/login/);
    await context.close();
  });

  test("the projects and audit pages: create a project, then find it in the log", async ({ page, signIn }, info) => {
    await signIn("admin");
    const name = `Made by admin ${info.project.name} ${Date.now() % 100000}`;
    await page.goto("/admin/projects");
    await expectAccessible(page, info);
    await page.getByLabel("New project name").fill(name);
    await page.getByRole("button", { name: "Create project" }).click();
    await expect(toast(page)).toContainText("Project created");
    await expect(page.getByRole("heading", { name })).toBeVisible();
    await expectAccessible(page, info);
    // A logo replaces the initials in the project's header circle.
    await page.getByLabel("Logo image (PNG, JPEG or WebP, up to 1 MB)").setInputFiles(await jpegFile("logo.jpg", "#2a9d8f", 400, 300));
    await page.getByRole("button", { name: "Upload logo" }).click();
    await expect(toast(page)).toContainText("Logo saved");
    const logo = page.getByRole("img", { name: `Logo of ${name}` });
    await expect(logo).toBeVisible();
    const src = (await logo.getAttribute("src"))!;
    const served = await page.request.get(src);
    expect(served.headers()["content-type"]).toBe("image/webp");
    await page.goto(src.replace(/\/logo\?.*$/, ""));
    await expect(page.locator(".project-logo img")).toHaveAttribute("src", src);
    await page.goto(`/admin/audit?action=project.created&user=${encodeURIComponent(userFor(info, "admin"))}`);
    await expect(page.getByRole("cell", { name: "project.created" }).first()).toBeVisible();
    await expect(page.getByRole("cell", { name: "sign_in.success" })).toHaveCount(0);
    await expectAccessible(page, info);
  });

  test("a person without the admin role is told the console does not exist", async ({ page, signIn }) => {
    await signIn("profile");
    const response = await page.goto("/admin");
    expect(response?.status()).toBe(404);
    await expect(page.getByText("Page not found")).toBeVisible();
  });
});

test.describe("profile settings", () => {
  test("edit and save the profile; it persists", { tag: "@core" }, async ({ page, signIn }, info) => {
    const me = await signIn("profile");
    await page.goto("/profile");
    await expect(page.getByRole("heading", { name: "Profile Settings" })).toBeVisible();
    await expect(page.locator("#profile").getByText(me.email)).toBeVisible();
    await expectAccessible(page, info);
    await page.getByLabel("Name", { exact: true }).fill("Renamed");
    await page.getByLabel("Mobile", { exact: true }).fill("831112222");
    await page.getByLabel("Country", { exact: true }).selectOption("ZA");
    await page.getByLabel("Timezone", { exact: true }).selectOption({ label: "Africa/Johannesburg (UTC+2)" });
    await page.getByLabel("Language", { exact: true }).selectOption("fr");
    await page.getByLabel("Org unit", { exact: true }).selectOption("Analytics");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(toast(page)).toContainText("Profile saved");
    await page.goto("/profile");
    await expect(page.getByLabel("Name", { exact: true })).toHaveValue("Renamed");
    await expect(page.getByLabel("Mobile", { exact: true })).toHaveValue("83 111 2222");
    await expect(page.getByLabel("Country", { exact: true })).toHaveValue("ZA");
    await expect(page.getByLabel("Language", { exact: true })).toHaveValue("fr");
    await expect(page.getByLabel("Org unit", { exact: true })).toHaveValue("Analytics");
  });

  test("keyboard only: change the name and save with Enter", async ({ page, signIn, db }) => {
    const me = await signIn("profileKeys");
    // A complete profile, as an approved application leaves it, so only the name changes.
    const orgUnit = await db.selectFrom("org_units").select("id").where("name", "=", "Research").executeTakeFirstOrThrow();
    await db
      .updateTable("users")
      .set({ mobile: "821234567", country_code: "GB", timezone_id: 1, language_code: "en", org_unit_id: orgUnit.id })
      .where("id", "=", me.id)
      .execute();
    await page.goto("/profile");
    const name = page.getByLabel("Name", { exact: true });
    await tabTo(page, name, 40);
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("Keyed");
    await page.keyboard.press("Enter");
    await expect(toast(page)).toContainText("Profile saved");
    await expect(page.getByLabel("Name", { exact: true })).toHaveValue("Keyed");
  });

  test("the profile's code fields (TOTP set-up and removal) take digits on a numeric keypad and refuse letters with the spec's message", async ({
    page,
    browser,
    signIn,
    db,
  }, info) => {
    await signIn("codeEnrol");
    await page.goto("/profile/totp");
    await expectCodeField(page, info, () => page.getByRole("button", { name: "Turn on" }).click());
    await expectAccessible(page, info);

    const context = await browser.newContext({ javaScriptEnabled: hasJs(info) });
    const enrolled = await signIn("codeProfile", context);
    const other = await context.newPage();
    await other.goto("/profile");
    await expectCodeField(other, info, () => other.getByRole("button", { name: "Remove two-factor authentication" }).click());
    await expectAccessible(other, info);
    await context.close();
    const user = await db.selectFrom("users").select("totp_secret").where("id", "=", enrolled.id).executeTakeFirstOrThrow();
    expect(user.totp_secret).not.toBeNull();
  });

  test("enrol TOTP from the QR code's key, then sign in with password and code", async ({ page, signIn }, info) => {
    const me = await signIn("totpEnrol");
    await page.goto("/profile");
    await page.getByRole("link", { name: "Set up two-factor authentication" }).click();
    await expect(page.getByRole("img", { name: "QR code of your authenticator key" }).locator("svg")).toBeVisible();
    await expectAccessible(page, info);
    const secret = (await page.getByTestId("totp-secret").innerText()).replace(/\s/g, "");
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await page.getByLabel("Code", { exact: true }).fill(totpCode(secret));
    await page.getByRole("button", { name: "Turn on" }).click();
    await expect(toast(page)).toContainText("Two-factor authentication is on");

    await page.context().clearCookies();
    await page.goto("/login?method=password");
    // The next step's code: the one that confirmed enrolment cannot be used again.
    await fillPasswordForm(page, me.email, PASSWORD, totpCode(secret, Date.now() + 30_000));
    await expect(page).toHaveURL(/\/dashboard$/);
  });

  test("sign out other sessions ends them and keeps this one", { tag: "@core" }, async ({ page, browser, signIn }, info) => {
    const other = await browser.newContext({ javaScriptEnabled: hasJs(info) });
    const otherPage = await other.newPage();
    await signIn("sessions", other);
    await signIn("sessions");
    await page.goto("/profile");
    await expect(page.getByText("(this device)")).toBeVisible();
    await page.getByRole("button", { name: "Sign out other sessions" }).click();
    await expect(toast(page)).toContainText(/Signed out of \d+ other session/);
    await otherPage.goto("/dashboard");
    await expect(otherPage).toHaveURL(/\/login/);
    await page.goto("/dashboard");
    await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
    await other.close();
  });
});
