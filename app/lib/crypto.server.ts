import { createCipheriv, createDecipheriv, createHmac, hash, hkdfSync, randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/** A URL-safe random token; 32 bytes = 256 bits. */
export const randomToken = (bytes = 32) => randomBytes(bytes).toString("base64url");
// One-shot crypto.hash: a quarter of createHash().update().digest()'s cost (every share link and token request hashes).
export const sha256 = (value: string | Buffer) => hash("sha256", value, "hex");
export const hmac = (secret: string, value: string) => createHmac("sha256", secret).update(value).digest("base64url");

export function safeEqual(a: string, b: string) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

// scrypt, N=2^15 r=8 p=1: ~50 ms here, 32 MiB of memory per hash.
const N = 2 ** 15;
const R = 8;
const P = 1;
const scryptAsync = (password: string, salt: Buffer, n: number, r: number, p: number) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, 32, { N: n, r, p, maxmem: 128 * n * r * 2 }, (err, key) => (err ? reject(err) : resolve(key))),
  );

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64")}$${key.toString("base64")}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  // Without a stored hash, still spend the time of a real check so timing does not reveal accounts.
  const parts = (stored ?? `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString("base64")}$`).split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const key = await scryptAsync(password, Buffer.from(salt, "base64"), Number(n), Number(r), Number(p));
  const expected = Buffer.from(hash, "base64");
  return stored !== null && expected.length === key.length && timingSafeEqual(expected, key);
}

/**
 * A secret Koala must use again later (a provider's client secret), sealed for the database: AES-256-GCM under a key
 * derived from `masterSecret` (SESSION_SECRET) for `purpose`. `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */
export function sealSecret(plain: string, masterSecret: string, purpose: string): string {
  const key = Buffer.from(hkdfSync("sha256", masterSecret, "koala", purpose, 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return ["v1", iv, cipher.getAuthTag(), body].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
}

/** The secret `sealSecret` sealed, or null when it cannot be opened (another SESSION_SECRET, or tampered with). */
export function openSecret(sealed: string, masterSecret: string, purpose: string): string | null {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== "v1" || !iv || !tag || body === undefined) return null;
  try {
    const key = Buffer.from(hkdfSync("sha256", masterSecret, "koala", purpose, 32));
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
