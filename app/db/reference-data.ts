/**
 * Reference lists seeded by migration 002. Country names and language names come from the
 * runtime's ICU data (Intl.DisplayNames), so only codes and dial prefixes live here.
 */

/** ISO 3166-1 alpha-2 code and international dial prefix. */
export const COUNTRY_DIAL_CODES =
  "AD:376 AE:971 AF:93 AG:1268 AI:1264 AL:355 AM:374 AO:244 AR:54 AS:1684 AT:43 AU:61 AW:297 AX:358 AZ:994 " +
  "BA:387 BB:1246 BD:880 BE:32 BF:226 BG:359 BH:973 BI:257 BJ:229 BL:590 BM:1441 BN:673 BO:591 BQ:599 BR:55 " +
  "BS:1242 BT:975 BW:267 BY:375 BZ:501 CA:1 CC:61 CD:243 CF:236 CG:242 CH:41 CI:225 CK:682 CL:56 CM:237 CN:86 " +
  "CO:57 CR:506 CU:53 CV:238 CW:599 CX:61 CY:357 CZ:420 DE:49 DJ:253 DK:45 DM:1767 DO:1809 DZ:213 EC:593 EE:372 " +
  "EG:20 EH:212 ER:291 ES:34 ET:251 FI:358 FJ:679 FK:500 FM:691 FO:298 FR:33 GA:241 GB:44 GD:1473 GE:995 GF:594 " +
  "GG:44 GH:233 GI:350 GL:299 GM:220 GN:224 GP:590 GQ:240 GR:30 GT:502 GU:1671 GW:245 GY:592 HK:852 HN:504 " +
  "HR:385 HT:509 HU:36 ID:62 IE:353 IL:972 IM:44 IN:91 IO:246 IQ:964 IR:98 IS:354 IT:39 JE:44 JM:1876 JO:962 " +
  "JP:81 KE:254 KG:996 KH:855 KI:686 KM:269 KN:1869 KP:850 KR:82 KW:965 KY:1345 KZ:7 LA:856 LB:961 LC:1758 " +
  "LI:423 LK:94 LR:231 LS:266 LT:370 LU:352 LV:371 LY:218 MA:212 MC:377 MD:373 ME:382 MF:590 MG:261 MH:692 " +
  "MK:389 ML:223 MM:95 MN:976 MO:853 MP:1670 MQ:596 MR:222 MS:1664 MT:356 MU:230 MV:960 MW:265 MX:52 MY:60 " +
  "MZ:258 NA:264 NC:687 NE:227 NF:672 NG:234 NI:505 NL:31 NO:47 NP:977 NR:674 NU:683 NZ:64 OM:968 PA:507 PE:51 " +
  "PF:689 PG:675 PH:63 PK:92 PL:48 PM:508 PN:64 PR:1787 PS:970 PT:351 PW:680 PY:595 QA:974 RE:262 RO:40 RS:381 " +
  "RU:7 RW:250 SA:966 SB:677 SC:248 SD:249 SE:46 SG:65 SH:290 SI:386 SJ:47 SK:421 SL:232 SM:378 SN:221 SO:252 " +
  "SR:597 SS:211 ST:239 SV:503 SX:1721 SY:963 SZ:268 TC:1649 TD:235 TG:228 TH:66 TJ:992 TK:690 TL:670 TM:993 " +
  "TN:216 TO:676 TR:90 TT:1868 TV:688 TW:886 TZ:255 UA:380 UG:256 US:1 UY:598 UZ:998 VA:39 VC:1784 VE:58 " +
  "VG:1284 VI:1340 VN:84 VU:678 WF:681 WS:685 XK:383 YE:967 YT:262 ZA:27 ZM:260 ZW:263";

/** ISO 639-1 codes. */
export const LANGUAGE_CODES =
  "aa ab af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en " +
  "eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu " +
  "ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my " +
  "na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm " +
  "sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu";

/** The spec's sample list marks German inactive; the rest of the real list is active. */
export const INACTIVE_LANGUAGES = new Set(["de"]);

export const ORG_UNITS = ["Research", "Insights", "Analytics", "Client Services", "Data Science", "Design", "Operations", "Management"];

export function countries() {
  const names = new Intl.DisplayNames(["en"], { type: "region" });
  return COUNTRY_DIAL_CODES.split(" ").map((pair) => {
    const [code, dial] = pair.split(":") as [string, string];
    return { code, name: names.of(code) ?? code, dial_code: `+${dial}` };
  });
}

export function languages() {
  const names = new Intl.DisplayNames(["en"], { type: "language" });
  return LANGUAGE_CODES.split(" ").map((iso) => ({
    iso_code: iso,
    name: names.of(iso) ?? iso,
    status: INACTIVE_LANGUAGES.has(iso) ? ("inactive" as const) : ("active" as const),
  }));
}

/**
 * IANA's current names for the zones ICU still lists under an older one. `Intl.supportedValuesOf("timeZone")` gives
 * CLDR's canonical ids, which kept the names of their day ("Asia/Calcutta", "Europe/Kiev") after IANA renamed the
 * zones; these are exactly the ids where the two differ by a rename (tzdata's `backward` file). Intl accepts both
 * spellings. A runtime that already lists the current names leaves this map unused.
 */
export const LEGACY_ZONE_NAMES: Readonly<Record<string, string>> = {
  "Africa/Asmera": "Africa/Asmara",
  "America/Buenos_Aires": "America/Argentina/Buenos_Aires",
  "America/Catamarca": "America/Argentina/Catamarca",
  "America/Coral_Harbour": "America/Atikokan",
  "America/Cordoba": "America/Argentina/Cordoba",
  "America/Godthab": "America/Nuuk",
  "America/Indianapolis": "America/Indiana/Indianapolis",
  "America/Jujuy": "America/Argentina/Jujuy",
  "America/Louisville": "America/Kentucky/Louisville",
  "America/Mendoza": "America/Argentina/Mendoza",
  "Asia/Calcutta": "Asia/Kolkata",
  "Asia/Katmandu": "Asia/Kathmandu",
  "Asia/Rangoon": "Asia/Yangon",
  "Asia/Saigon": "Asia/Ho_Chi_Minh",
  "Atlantic/Faeroe": "Atlantic/Faroe",
  "Europe/Kiev": "Europe/Kyiv",
  "Pacific/Enderbury": "Pacific/Kanton",
  "Pacific/Ponape": "Pacific/Pohnpei",
  "Pacific/Truk": "Pacific/Chuuk",
};
/** A zone's current IANA name (a legacy one, as stored before or as a runtime lists it, mapped; any other as it is). */
export const currentZoneName = (name: string) => LEGACY_ZONE_NAMES[name] ?? name;

/** Every IANA zone the runtime knows, by its current name, with its standard (non-DST) offset in hours. */
export function timezones() {
  const year = new Date().getUTCFullYear();
  const offsetAt = (zone: string, month: number) => {
    const date = new Date(Date.UTC(year, month, 1, 12));
    const part = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" })
      .formatToParts(date)
      .find((p) => p.type === "timeZoneName")?.value;
    const m = /GMT([+-])(\d{2}):(\d{2})/.exec(part ?? "");
    if (!m) return 0;
    return (m[1] === "-" ? -1 : 1) * (Number(m[2]) + Number(m[3]) / 60);
  };
  const names = [...new Set(Intl.supportedValuesOf("timeZone").map(currentZoneName))].sort();
  return names.map((name) => ({ name, offset_hours: Math.min(offsetAt(name, 0), offsetAt(name, 6)) }));
}
