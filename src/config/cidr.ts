import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

/**
 * Dotted-quad IPv4 or IPv6 only. ipaddr.js alone also accepts legacy spellings (`127.1`, `0x7f.1`,
 * `2130706433`), which would give one address several bucket names.
 */
export function isStrictIp(address: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(address) || ipaddr.IPv6.isValid(address);
}

/**
 * Why an entry of `api.trusted_proxy_cidrs` is unusable, or null when it is fine. Accepts a CIDR
 * (`10.0.0.0/8`, `fd00::/8`) or a single address; refuses what proxy-addr would refuse (e.g. `/0`,
 * which would trust the whole internet) and its named ranges, which are not CIDRs.
 */
export function invalidCidrReason(entry: string): string | null {
  const slash = entry.lastIndexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const prefix = slash === -1 ? null : entry.slice(slash + 1);
  const hint = `${JSON.stringify(entry)} is not a CIDR such as 10.0.0.0/8 or a single IP address`;
  if (!isStrictIp(address) || (prefix !== null && !/^\d{1,3}$/.test(prefix))) return hint;
  try {
    proxyaddr.compile(entry);
  } catch {
    return `${hint} (the prefix length must be 1 to ${ipaddr.parse(address).kind() === 'ipv4' ? 32 : 128})`;
  }
  return null;
}
