import { preference } from "./cookies.server";

/** The colour theme, in the spec's `theme` cookie: the first paint is right without script. */
export const THEMES = ["lightmode", "darkmode"] as const;
export type Theme = (typeof THEMES)[number];
export const themePreference = preference("theme", THEMES, "lightmode");
export const getTheme = (request: Request): Theme => themePreference.read(request);
