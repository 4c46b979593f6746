/** IPv4 prefixes as operators type them: one list, checked as the API checks them. */

/** An IPv4 prefix `a.b.c.d/n` without host bits, or the reason it is not one. */
export function checkPrefix(text: string): string | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(text);
  if (!match) return `${text} is not an IPv4 prefix like 10.0.0.0/24`;
  const octets = match.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return `${text} has an octet above 255`;
  const length = match[5] === undefined ? 32 : Number(match[5]);
  if (length > 32) return `${text} has a prefix length above 32`;
  const address = octets.reduce((acc, o) => acc * 256 + o, 0);
  const hostBits = 2 ** (32 - length);
  if (address % hostBits !== 0) return `${text} has host bits set`;
  return null;
}

export function splitPrefixes(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((p) => p.trim())
    .filter(Boolean);
}
