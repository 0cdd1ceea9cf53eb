/**
 * The list of common passwords a new password is checked against: the 49,000 most used passwords of public leaks,
 * as the zxcvbn-ts project ships them (`@zxcvbn-ts/language-common`, MIT). Loaded on first use (about 1 MB).
 */
let list: Promise<Set<string>> | undefined;
const load = () => (list ??= import("@zxcvbn-ts/language-common").then((m) => new Set(m.dictionary.passwords)));

/**
 * Whether a password is, or is barely more than, a common one: the list's word itself (any case), wrapped in digits
 * and symbols ("Password2024!", "1qwerty1234567"), or repeated ("monkeymonkey").
 */
export async function isCommonPassword(password: string): Promise<boolean> {
  const common = await load();
  const lower = password.toLowerCase();
  if (common.has(lower)) return true;
  const core = lower.replace(/^[^a-z]+|[^a-z]+$/g, "");
  if (core.length >= 3 && common.has(core)) return true;
  for (let size = 1; size <= lower.length / 2; size++) {
    if (lower.length % size) continue;
    const unit = lower.slice(0, size);
    if (unit.repeat(lower.length / size) === lower && (size < 4 || common.has(unit))) return true;
  }
  return false;
}
