import type { LoaderFunctionArgs } from "@remix-run/node";
import { NotFoundError } from "~/lib/errors";
import { api } from "~/web/http.server";
import { logoUrl } from "~/lib/media";
import { profileOf } from "~/models/profile.server";
import { referenceLists } from "~/models/reference.server";
import { requireActor } from "~/sessions.server";

/**
 * The spec's static JSON files (spec 2 §7), made from the database for the signed-in person, with the spec's field
 * names: their profile (`user.json`, never the password), their projects (`clients.json`) and the reference lists.
 */
const FILES: Record<string, (actor: Awaited<ReturnType<typeof requireActor>>) => Promise<unknown>> = {
  async "user.json"(actor) {
    const p = await profileOf(actor);
    return {
      name: p.name,
      sur_name: p.surname,
      email: p.email,
      mobile: p.mobile,
      country_id: p.country_code,
      timezone_id: p.timezone_id,
      language_id: p.language_code,
      role_id: p.role,
      client_id: p.projects.map((c) => c.id),
      org_unit_id: p.org_unit_id,
    };
  },
  async "clients.json"(actor) {
    const p = await profileOf(actor);
    return p.projects.map((c) => ({
      client_id: c.id,
      name: c.name,
      logo: c.logo_key ? logoUrl(c.id, c.logo_key) : null,
      wsc: c.wsc === 1,
    }));
  },
  async "countries.json"() {
    return (await referenceLists()).countries.map((c) => ({ _id: c.code, code: c.code, name: c.name, country_code: c.dialCode }));
  },
  async "languages.json"() {
    return (await referenceLists()).languages.map((l) => ({
      _id: l.isoCode,
      _status: l.status,
      iso_code: l.isoCode,
      name: l.name,
      created_at: new Date(l.createdAt).toISOString(),
      updated_at: new Date(l.updatedAt).toISOString(),
    }));
  },
  async "timezones.json"() {
    return (await referenceLists()).timezones.map((t) => ({ id: t.id, name: t.name, offset: t.offset }));
  },
  async "org_units.json"() {
    return (await referenceLists()).orgUnits.map((o) => ({ id: o.id, name: o.name }));
  },
};

export const loader = api(async ({ request, params, context }: LoaderFunctionArgs) => {
  const make = Object.hasOwn(FILES, params.file ?? "") ? FILES[params.file!] : undefined;
  if (!make) throw new NotFoundError("Not found");
  const body = await make(await requireActor(request, context));
  return Response.json(body, { headers: { "Cache-Control": "private, no-store" } });
});
