import { createCookieSessionStorage } from "@remix-run/node";
import { z } from "zod";
import { signedCookie } from "./cookies.server";

/** A message for the next page, shown in the layout's live region, with or without JavaScript. */
export const ToastSchema = z.object({
  kind: z.enum(["success", "error", "info"]),
  title: z.string().max(500),
  description: z.string().max(2000).optional(),
});
export type Toast = z.infer<typeof ToastSchema>;

const flashCookie = signedCookie("koala_flash");
const storageFor = (cookie: ReturnType<typeof flashCookie>) =>
  createCookieSessionStorage<Record<string, never>, { toast: unknown }>({ cookie });
let made: { cookie: ReturnType<typeof flashCookie>; storage: ReturnType<typeof storageFor> } | undefined;
const flash = () => {
  const cookie = flashCookie();
  if (made?.cookie !== cookie) made = { cookie, storage: storageFor(cookie) };
  return made.storage;
};

/** Sets a toast for the next page (the value of a Set-Cookie header). */
export async function flashToast(request: Request, toast: Toast): Promise<string> {
  const session = await flash().getSession(request.headers.get("Cookie"));
  session.flash("toast", toast);
  return flash().commitSession(session);
}

/** Whether a toast waits in the Cookie header (the page that shows it is not the same for everyone). */
export async function hasFlash(cookieHeader: string | null): Promise<boolean> {
  if (!cookieHeader?.includes("koala_flash=")) return false;
  return (await flash().getSession(cookieHeader)).has("toast");
}

/** The toast waiting for this page, checked against its schema (a cookie is input like any other), and the cookie that spends it. */
export async function takeToast(request: Request): Promise<{ toast: Toast | null; setCookie: string | null }> {
  const session = await flash().getSession(request.headers.get("Cookie"));
  if (!session.has("toast")) return { toast: null, setCookie: null };
  const parsed = ToastSchema.safeParse(session.get("toast"));
  return { toast: parsed.success ? parsed.data : null, setCookie: await flash().commitSession(session) };
}
