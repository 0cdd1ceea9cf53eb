import { describe, expect, it } from "vitest";
import { base32Decode, base32Encode, hotp, matchTotpStep, otpauthUri, stepAt, totpCode } from "~/lib/totp.server";

// RFC 6238 appendix B, SHA-1, secret "12345678901234567890", 8 digits.
const RFC_SECRET = Buffer.from("12345678901234567890");
const vectors: [number, string][] = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"],
];

describe("TOTP (RFC 6238)", () => {
  it.each(vectors)("matches the RFC vector at t=%i", (t, expected) => {
    expect(hotp(RFC_SECRET, Math.floor(t / 30), 8)).toBe(expected);
  });
  it("round-trips base32", () => {
    const secret = base32Encode(RFC_SECRET);
    expect(secret).toBe("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
    expect(base32Decode(secret).equals(RFC_SECRET)).toBe(true);
  });
  it("accepts the current step and one either side, nothing further", () => {
    const secret = base32Encode(RFC_SECRET);
    const now = 1_700_000_000_000;
    const step = stepAt(now);
    for (const d of [-1, 0, 1]) expect(matchTotpStep(secret, totpCode(secret, now + d * 30_000), now)).toBe(step + d);
    for (const d of [-2, 2]) expect(matchTotpStep(secret, totpCode(secret, now + d * 30_000), now)).toBeNull();
  });
  it("ignores spaces and refuses other characters", () => {
    const secret = base32Encode(RFC_SECRET);
    const now = 1_700_000_000_000;
    const code = totpCode(secret, now);
    expect(matchTotpStep(secret, `${code.slice(0, 3)} ${code.slice(3)}`, now)).toBe(stepAt(now));
    expect(matchTotpStep(secret, `${code.slice(0, 5)}x`, now)).toBeNull();
  });
  it("builds an otpauth URI", () => {
    expect(otpauthUri("ABC", "a@b.co")).toBe("otpauth://totp/Koala%3Aa%40b.co?secret=ABC&issuer=Koala&algorithm=SHA1&digits=6&period=30");
  });
});
