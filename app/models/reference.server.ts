import { db } from "~/db/connection.server";
import { InvalidError } from "~/lib/errors";

/** A choice that is not on its reference list (a hand-made post): which field, so the form can say so there. */
export class NotOnListError extends InvalidError {
  constructor(readonly field: string) {
    super("Please choose from the list.");
    this.name = "NotOnListError";
  }
}

/**
 * The reference lists of registration and profile (countries with dial prefixes, active languages, time zones,
 * org units): seeded by migration 002 and never changed by the app, so read once per process.
 */
export interface ReferenceLists {
  countries: { code: string; name: string; dialCode: string }[];
  languages: { isoCode: string; name: string; status: "active" | "inactive"; createdAt: number; updatedAt: number }[];
  timezones: { id: number; name: string; offset: number }[];
  orgUnits: { id: number; name: string }[];
}

let cached: { db: unknown; lists: Promise<ReferenceLists> } | undefined;

export function referenceLists(): Promise<ReferenceLists> {
  // Keyed by the connection, so tests that switch databases never read another's lists.
  if (cached?.db !== db()) cached = { db: db(), lists: load() };
  return cached.lists;
}

async function load(): Promise<ReferenceLists> {
  const [countries, languages, timezones, orgUnits] = await Promise.all([
    db().selectFrom("countries").select(["code", "name", "dial_code"]).orderBy("name").execute(),
    db().selectFrom("languages").selectAll().orderBy("name").execute(),
    db().selectFrom("timezones").select(["id", "name", "offset_hours"]).orderBy("offset_hours").orderBy("name").execute(),
    db().selectFrom("org_units").select(["id", "name"]).orderBy("name").execute(),
  ]);
  return {
    countries: countries.map((c) => ({ code: c.code, name: c.name, dialCode: c.dial_code })),
    languages: languages.map((l) => ({
      isoCode: l.iso_code,
      name: l.name,
      status: l.status,
      createdAt: Number(l.created_at),
      updatedAt: Number(l.updated_at),
    })),
    timezones: timezones.map((t) => ({ id: t.id, name: t.name, offset: Number(t.offset_hours) })),
    orgUnits: orgUnits,
  };
}

/** "UTC+5:30", "UTC-3", "UTC+0". */
export function offsetLabel(hours: number) {
  const sign = hours < 0 ? "-" : "+";
  const abs = Math.abs(hours);
  const h = Math.floor(abs);
  const m = Math.round((abs - h) * 60);
  return `UTC${sign}${h}${m ? `:${String(m).padStart(2, "0")}` : ""}`;
}

/**
 * A person's choices checked against the lists: the country and dial prefix by ISO code, the time zone by id, an
 * active language by ISO code, the org unit by name. Null (with the field) when one is not on its list.
 */
export async function resolveChoices(input: {
  country: string;
  country_code?: string;
  timezone: string;
  language: string;
  org_unit: string;
}) {
  const lists = await referenceLists();
  const country = lists.countries.find((c) => c.code === input.country);
  const dial = input.country_code === undefined ? country : lists.countries.find((c) => c.code === input.country_code);
  const timezone = lists.timezones.find((t) => String(t.id) === input.timezone);
  const language = lists.languages.find((l) => l.isoCode === input.language && l.status === "active");
  const orgUnit = lists.orgUnits.find((o) => o.name === input.org_unit);
  const bad = !country
    ? "country"
    : !dial
      ? "country_code"
      : !timezone
        ? "timezone"
        : !language
          ? "language"
          : !orgUnit
            ? "org_unit"
            : null;
  if (bad || !country || !dial || !timezone || !language || !orgUnit) return { bad: bad ?? "country" } as const;
  return { bad: null, country, dial, timezone, language, orgUnit } as const;
}

/** The lists as the forms' options: labels with the dial prefix and the offset, languages active only. */
export async function choiceOptions() {
  const lists = await referenceLists();
  return {
    countries: lists.countries.map((c) => ({ value: c.code, label: c.name })),
    dialCodes: lists.countries.map((c) => ({ value: c.code, label: `${c.name} (${c.dialCode})` })),
    timezones: lists.timezones.map((t) => ({ value: String(t.id), label: `${t.name} (${offsetLabel(t.offset)})` })),
    languages: lists.languages.filter((l) => l.status === "active").map((l) => ({ value: l.isoCode, label: l.name })),
    orgUnits: lists.orgUnits.map((o) => ({ value: o.name, label: o.name })),
  };
}
