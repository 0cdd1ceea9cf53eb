import sharp from "sharp";
import { config } from "~/config.server";
import { keywordProblem } from "~/lib/schemas";
import { hashPassword } from "~/lib/crypto.server";
import { newTotpSecret, otpauthUri } from "~/lib/totp.server";
import type { Actor } from "~/models/actor";
import { createBoard } from "~/models/boards.server";
import { setDailyMedia } from "~/models/daily-media.server";
import { insertImage, insertImageRows } from "~/models/images.server";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { SYSTEM } from "~/models/actor";
import { projectScope } from "~/models/scope.server";
import { addMember, createProject } from "~/models/projects.server";
import { referenceLists } from "~/models/reference.server";
import { submitRegistration } from "~/models/registrations.server";
import { addGroupRole } from "~/models/sso.server";
import type { MemberRole } from "~/lib/account-schemas";
import { createUser, findUserByEmail } from "~/models/users.server";
import { IN_STORE, MARKETING, MOMENTS, PEOPLE, PRODUCTS, SETTINGS } from "./demo-vocabulary";
import { storeImageFile } from "./image-files.server";

export const DEMO_EMAIL = "demo@koala.example";
export const DEMO_PASSWORD = "koala-demo-2026";
/** The demo's administrator (the admin console at /admin), same password; signs in by e-mailed link. */
export const DEMO_ADMIN_EMAIL = "admin@koala.example";

/** A deterministic pseudo-random sequence, so every fresh demo library is the same. */
export function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SUBJECTS = [
  "Shelf",
  "Storefront",
  "Packaging",
  "Display",
  "Poster",
  "Receipt",
  "Menu",
  "Billboard",
  "Aisle",
  "Label",
  "Counter",
  "Window",
];
const PLACES = ["Cape Town", "Johannesburg", "Durban", "London", "Toronto", "Sydney", "Mumbai", "Austin", "Leeds", "Perth"];
const COLOURS = [
  "#e63946",
  "#f4a261",
  "#2a9d8f",
  "#264653",
  "#e9c46a",
  "#8ab17d",
  "#6d597a",
  "#b56576",
  "#457b9d",
  "#ffb703",
  "#219ebc",
  "#023047",
];

/** The words painted on a demo picture's caption panel (what OCR reads from it): an offer and a price. */
export function demoCaption(n: number): string {
  const rnd = seeded(n * 104729 + 3);
  const offer = ["SALE", "NEW", "2 FOR 1", "OPEN", "FRESH TODAY", "SPECIAL"][Math.floor(rnd() * 6)];
  return `${offer} ${Math.floor(rnd() * 90 + 9)}.99`;
}

/** A varied picture drawn from the seed: background gradient, shapes and a caption panel with its words. */
export async function drawDemoImage(n: number, width = 1200, height = 900): Promise<Buffer> {
  const rnd = seeded(n * 7919 + 17);
  const pick = <T>(list: T[]) => list[Math.floor(rnd() * list.length)]!;
  const shapes = Array.from({ length: 6 + Math.floor(rnd() * 8) }, () => {
    const c = pick(COLOURS);
    const x = Math.floor(rnd() * width);
    const y = Math.floor(rnd() * height);
    const s = 40 + Math.floor(rnd() * 220);
    const o = (0.35 + rnd() * 0.6).toFixed(2);
    return rnd() < 0.5
      ? `<circle cx="${x}" cy="${y}" r="${s / 2}" fill="${c}" opacity="${o}"/>`
      : `<rect x="${x}" y="${y}" width="${s}" height="${Math.floor(s * (0.5 + rnd()))}" rx="${Math.floor(rnd() * 30)}" fill="${c}" opacity="${o}" transform="rotate(${Math.floor(rnd() * 90)} ${x} ${y})"/>`;
  });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="${rnd().toFixed(2)}" y2="1">
      <stop offset="0" stop-color="${pick(COLOURS)}"/><stop offset="1" stop-color="${pick(COLOURS)}"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>${shapes.join("")}
    <rect x="40" y="${height - 140}" width="${width - 80}" height="100" rx="12" fill="#ffffff" opacity="0.85"/>
    <text x="70" y="${height - 72}" font-family="DejaVu Sans, Liberation Sans, sans-serif" font-weight="bold" font-size="48" fill="#222">${demoCaption(n)}</text>
  </svg>`;
  const shot = demoShot(n);
  return sharp(Buffer.from(svg))
    .withExif({ IFD0: { Make: shot.make, Model: shot.model }, IFD2: { DateTimeOriginal: shot.taken } })
    .jpeg({ quality: 80 })
    .toBuffer();
}

/** When and with what a demo picture was "taken" (its EXIF, read on ingest like a real photo's): two field years' worth. */
export function demoShot(n: number) {
  const rnd = seeded(n * 31337 + 11);
  const cameras = [
    ["Apple", "iPhone 15"],
    ["samsung", "Galaxy S23"],
    ["Google", "Pixel 8"],
    ["Canon", "Canon EOS R6"],
  ] as const;
  const [make, model] = cameras[Math.floor(rnd() * cameras.length)]!;
  const at = new Date(Date.UTC(2024, 0, 1) + Math.floor(rnd() * 730) * 86_400_000 + Math.floor((8 + rnd() * 11) * 3600) * 1000);
  const two = (v: number) => String(v).padStart(2, "0");
  const taken = `${at.getUTCFullYear()}:${two(at.getUTCMonth() + 1)}:${two(at.getUTCDate())} ${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())}`;
  return { make, model, taken };
}

/** A coherent set of tags for one picture: a product category with its packaging, where, who, what is promoted, when. */
function demoKeywords(rnd: () => number): string[] {
  const pick = <T>(list: T[]) => list[Math.floor(rnd() * list.length)]!;
  const some = (list: string[], min: number, max: number) =>
    Array.from({ length: min + Math.floor(rnd() * (max - min + 1)) }, () => pick(list));
  const category = PRODUCTS[pick(Object.keys(PRODUCTS))]!;
  return [
    ...new Set([
      ...some(category.products, 1, 3),
      ...some(category.packaging, 1, 2),
      pick(SETTINGS),
      ...some(IN_STORE, 1, 2),
      ...some(PEOPLE, 0, 2),
      ...some(MARKETING, 1, 3),
      ...some(MOMENTS, 1, 2),
    ]),
  ];
}

export function demoMetadata(n: number) {
  const rnd = seeded(n * 104729 + 3);
  const pick = <T>(list: T[]) => list[Math.floor(rnd() * list.length)]!;
  const subject = pick(SUBJECTS);
  const place = pick(PLACES);
  const keywords = demoKeywords(rnd);
  return {
    title: `${subject} in ${place} #${n}`,
    description: `${subject} photographed in ${place} during a store visit.`,
    keywords,
    ocrText: demoCaption(n),
    originalName: `IMG_${String(1000 + n).padStart(5, "0")}.jpg`,
  };
}

const ATTRIBUTES = [
  { name: "Region", code: "region", type: 1 as const, values: ["North", "South", "East", "West"] },
  { name: "Channel", code: "channel", type: 2 as const, values: ["Supermarket", "Convenience", "Online", "Wholesale"] },
  { name: "Quality", code: "quality", type: 3 as const, values: ["Good", "Fair", "Poor"] },
  { name: "Season", code: "season", type: 3 as const, values: ["Summer", "Winter", "Spring", "Autumn"] },
];

/**
 * The demo's WSC source, served by this server itself (routes/demo-wsc.$file.ts) so that Globex Packaging's re-import
 * works offline: two images the seed gave the project (with the default 100 a project, the re-import finds them by
 * checksum and updates them) and four new ones, with a WSC attribute of the manifest's own (Retailer). The source
 * is this server's own origin, which config.server.ts allows (as that one origin) only while the demo is on.
 */
const DEMO_WSC_IMAGES = [201, 202, 9001, 9002, 9003, 9004];
const RETAILERS = ["Pick n Pay", "Checkers", "Woolworths", "Spar"];
const REGIONS = ["North", "South", "East", "West"];

const ownOrigin = () => config().demo?.ownOrigin ?? new URL(config().appUrl).origin;
export const demoWscSource = () => `${ownOrigin()}/demo-wsc/globex.json`;

export function demoWscManifest() {
  return {
    images: DEMO_WSC_IMAGES.map((n) => {
      const meta = demoMetadata(n);
      return {
        url: `${ownOrigin()}/demo-wsc/${n}.jpg`,
        title: meta.title,
        description: meta.description,
        // The forms' keyword rules apply to a manifest: the demo's vocabulary has a few longer phrases.
        keywords: meta.keywords.filter((k) => !keywordProblem([k])),
        attributes: { Region: REGIONS[n % REGIONS.length], Retailer: RETAILERS[n % RETAILERS.length] },
      };
    }),
  };
}

/** An image of the demo's WSC source (`<n>.jpg`), drawn as the seed draws it; null for any other name. */
export async function demoWscImage(file: string): Promise<Buffer | null> {
  const n = Number(/^(\d{1,5})\.jpg$/.exec(file)?.[1]);
  return DEMO_WSC_IMAGES.includes(n) ? drawDemoImage(n) : null;
}

export interface SeedOptions {
  imagesPerProject?: number;
  log?: (line: string) => void;
}

/** The demo library: a demo user with password and TOTP, three projects, boards, generated images with attributes. */
export async function seedDemo(opts: SeedOptions = {}) {
  const say = opts.log ?? (() => {});
  if (await findUserByEmail(DEMO_EMAIL)) {
    say("Demo library already present.");
    return;
  }
  const started = Date.now();
  const secret = newTotpSecret();
  const user = await createUser({
    email: DEMO_EMAIL,
    name: "Demo",
    surname: "Researcher",
    role: "user",
    status: "active",
    password_hash: await hashPassword(DEMO_PASSWORD),
    totp_secret: secret,
    country_code: "ZA",
    language_code: "en",
    ...(await completeProfile("Africa/Johannesburg")),
    terms_acknowledged_at: null,
  });
  const actor: Actor = { id: user.id, role: user.role };
  await setDailyMedia([1, 2, 3].map((i) => ({ kind: "image" as const, url: `/daily/daily-${i}.jpg` })));

  const perProject = opts.imagesPerProject ?? 100;
  const projects = ["Acme Beverages", "Northwind Retail", "Globex Packaging"];
  let n = 0;
  for (const [pi, name] of projects.entries()) {
    const project = await createProject({ name, wsc: pi === 2, wscSource: pi === 2 ? demoWscSource() : null });
    await seedDemoGroups(project.id, pi);
    await addMember(project.id, user.id, "manager");
    const scope = await projectScope(actor, project.id);
    const attrIds: { id: number; values: string[] }[] = [];
    for (const a of ATTRIBUTES)
      attrIds.push({ id: await createAttribute(scope, { name: a.name, code: a.code, type: a.type }), values: a.values });
    const imageIds: number[] = [];
    const base = Date.now() - perProject * 60_000;
    // Drawing and derivatives run four at a time (sharp works off the main thread); inserts stay in order.
    for (let i = 0; i < perProject; i += 4) {
      const numbers = Array.from({ length: Math.min(4, perProject - i) }, (_, k) => n + i + k + 1);
      const files = await Promise.all(numbers.map(async (m) => storeImageFile(await drawDemoImage(m))));
      for (const [k, file] of files.entries()) {
        const m = numbers[k]!;
        // The caption's words are left for OCR to read from the picture, as an upload's would be.
        const id = await insertImage(scope, file, { ...demoMetadata(m), ocrText: "" }, { at: base + (i + k) * 60_000 });
        imageIds.push(id);
        const rnd = seeded(m);
        const values = attrIds
          .filter(() => rnd() < 0.8)
          .map((a) => ({ imageId: id, attributeId: a.id, value: a.values[Math.floor(rnd() * a.values.length)]! }));
        await setAttributeValues(scope, values);
      }
    }
    n += perProject;
    for (const [bi, title] of ["Highlights", "Client review", "Shelf study"].entries()) {
      const picked = imageIds.filter((_, i) => i % (bi + 3) === 0).slice(0, 24);
      await createBoard(scope, { title, imageIds: picked, clientBoard: bi === 1 });
    }
    say(`  ${name}: ${perProject} images, 3 boards`);
  }
  await seedDemoAccounts();
  say(
    [
      "",
      "Demo library ready.",
      `  Sign in as ${DEMO_EMAIL}, password ${DEMO_PASSWORD}`,
      `  TOTP secret ${secret}`,
      `  (authenticator URI: ${otpauthUri(secret, DEMO_EMAIL)})`,
      `  The current code: npm run koala -- totp-code --email ${DEMO_EMAIL}`,
      `  Or sign in with the e-mailed link: the local mailbox is at /dev/mailbox.`,
      `  The admin console (/admin): sign in as ${DEMO_ADMIN_EMAIL} with the e-mailed link.`,
      `  Two applications wait for approval there; /pending takes new ones.`,
      ...(config().oidc.providers.some((p) => p.id === "demo")
        ? [`  Company sign-in: "Sign in with Demo SSO" on /login, as maria (an editor) or tom (a viewer), password demo.`]
        : []),
      `  Seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      "",
    ].join("\n"),
  );
}

/**
 * The demo's company sign-in (npm start runs scripts/oidc-provider.mjs as "demo"): its group koala-editors edits the
 * first two projects, koala-viewers views the first. Nothing when no "demo" provider is configured.
 */
async function seedDemoGroups(projectId: number, index: number) {
  if (!config().oidc.providers.some((p) => p.id === "demo")) return;
  const roles: [string, MemberRole][] =
    index === 0
      ? [
          ["koala-editors", "editor"],
          ["koala-viewers", "viewer"],
        ]
      : index === 1
        ? [["koala-editors", "editor"]]
        : [];
  for (const [group, role] of roles) await addGroupRole(SYSTEM, { provider: "demo", group, projectId, role });
}

/** What Profile Settings asks for beyond name and country: a mobile, a time zone and an org unit. */
async function completeProfile(timezone: string) {
  const { timezones, orgUnits } = await referenceLists();
  return {
    mobile: "821234567",
    timezone_id: timezones.find((t) => t.name === timezone)?.id ?? null,
    org_unit_id: orgUnits.find((o) => o.name === "Research")?.id ?? null,
  };
}

/** The demo's admin and two applications waiting in the admin console's queue. */
async function seedDemoAccounts() {
  await createUser({
    email: DEMO_ADMIN_EMAIL,
    name: "Demo",
    surname: "Admin",
    role: "admin",
    status: "active",
    password_hash: await hashPassword(DEMO_PASSWORD),
    country_code: "GB",
    language_code: "en",
    ...(await completeProfile("Europe/London")),
  });
  const applicants = [
    {
      name: "Thandi",
      surname: "Mokoena",
      email: "thandi.mokoena@example.com",
      country: "ZA",
      tz: "Africa/Johannesburg",
      org: "Insights",
      client: "Acme Beverages",
    },
    {
      name: "Liam",
      surname: "Walsh",
      email: "liam.walsh@example.com",
      country: "IE",
      tz: "Europe/Dublin",
      org: "Analytics",
      client: "Northwind Retail",
    },
  ];
  for (const a of applicants) {
    const tz = (await referenceLists()).timezones.find((t) => t.name === a.tz);
    await submitRegistration(
      {
        name: a.name,
        surname: a.surname,
        email: a.email,
        country_code: a.country,
        mobile: "821234567",
        country: a.country,
        timezone: String(tz?.id ?? 1),
        org_unit: a.org,
        language: "en",
        client: a.client,
        sim_use: "Shelf and packaging studies for the client's quarterly review.",
      },
      null,
    );
  }
}

/**
 * A large project for performance work: `count` images of metadata only, reusing a handful of
 * stored files, inserted in batches.
 */
export async function seedLargeProject(opts: { count?: number; name?: string; memberEmail?: string; log?: (l: string) => void } = {}) {
  const count = opts.count ?? 100_000;
  const say = opts.log ?? (() => {});
  const name = opts.name ?? "Large Project";
  const project = await createProject({ name });
  const member = await findUserByEmail(opts.memberEmail ?? DEMO_EMAIL);
  if (member) await addMember(project.id, member.id, "manager");
  const files = [];
  for (let i = 0; i < 8; i++) files.push(await storeImageFile(await drawDemoImage(100_000 + i, 800, 600)));
  const base = Date.now() - count * 1000;
  const actor = member ? { id: member.id, role: member.role } : SYSTEM;
  const scope = await projectScope(actor, project.id);
  const batch = 1000;
  for (let start = 0; start < count; start += batch) {
    const rows = [];
    for (let i = start; i < Math.min(count, start + batch); i++)
      rows.push({ file: files[i % files.length]!, meta: demoMetadata(i + 1), at: base + i * 1000 });
    await insertImageRows(scope, rows);
    if ((start / batch) % 10 === 0) say(`  ${start + rows.length} / ${count}`);
  }
  say(`Large project "${name}" (id ${project.id}) has ${count} images.`);
  return project;
}
