import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ToolError } from './tool-error';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (tests inject their own DNS). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface AddressPolicy {
  /** Reach any address, private and loopback included (tools.http_fetch.allow_private). */
  allowPrivate: boolean;
  /** Host names (or IP literals) reachable whatever they resolve to (tools.http_fetch.allowed_hosts). */
  allowedHosts: readonly string[];
}

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));

/**
 * Why an address must not be fetched, or null when it is public. Only global unicast passes:
 * loopback, private, link-local (cloud metadata at 169.254.169.254), unique-local, multicast,
 * unspecified, carrier-grade NAT, reserved, and IPv6 forms that embed an IPv4 address (mapped,
 * 6to4, NAT64) are refused. `ipaddr.process` unwraps ::ffff:a.b.c.d first.
 */
export function addressRefusal(address: string): string | null {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  return range === 'unicast' ? null : `${parsed.toString()} is a ${RANGE_WORDS[range] ?? range} address`;
}

const RANGE_WORDS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  carrierGradeNat: 'carrier-grade NAT',
  reserved: 'reserved',
  ipv4Mapped: 'IPv4-mapped',
  rfc6052: 'NAT64 (IPv4-embedding)',
  '6to4': '6to4 (IPv4-embedding)',
  teredo: 'Teredo',
};

/** `[::1]` → `::1`, `Example.COM.` → `example.com`: the form allowlists and resolvers compare. */
export function normalizeHost(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * The address to connect to for `hostname`, after the policy's check. Every resolved address must
 * pass (a name with one private address among public ones is refused), and the connection is then
 * pinned to the checked address, so a second, different DNS answer (rebinding) is never used.
 */
export async function checkedAddress(hostname: string, policy: AddressPolicy, resolve: Resolver): Promise<ResolvedAddress> {
  const host = normalizeHost(hostname);
  const allowed = policy.allowPrivate || policy.allowedHosts.some((entry) => normalizeHost(entry) === host);
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      throw new ToolError(`Cannot resolve the host name "${host}".`, { cause: error });
    }
    if (addresses.length === 0) throw new ToolError(`The host name "${host}" has no addresses.`);
  }
  if (!allowed) {
    for (const { address } of addresses) {
      const reason = addressRefusal(address);
      if (reason) throw new ToolError(`Refused to fetch from "${host}": ${reason}; http_fetch only reaches public addresses.`);
    }
  }
  return addresses[0];
}

/** A `lookup` for http.request that answers only the checked address, whatever is asked. */
export function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
}
