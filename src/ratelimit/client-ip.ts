import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';
import { isStrictIp } from '../config/cidr';

/**
 * Finds the client IP a request is bucketed by (spec, Limits rules 4 and 5).
 *
 * Without trusted proxies it is the TCP peer. With them, `X-Forwarded-For` is walked right to left
 * from the peer: each hop is believed only while the address that reported it is trusted, so a
 * client can prepend whatever it likes to the header and still lands in the bucket of the address
 * the first trusted proxy saw. Addresses are normalised (`::ffff:10.0.0.1` → `10.0.0.1`, IPv6
 * compressed), so one client cannot appear under two spellings.
 */
export type ClientIpResolver = (req: IncomingMessage) => string;

/** Bucket name for a request whose peer address is unknown (the socket closed before we looked). */
export const UNKNOWN_CLIENT = 'unknown';

export function createClientIpResolver(trustedProxyCidrs: readonly string[]): ClientIpResolver {
  if (trustedProxyCidrs.length === 0) {
    // Nothing trusted: X-Forwarded-For is never read, and a kept-alive connection's peer is read once.
    const peers = new WeakMap<object, string>();
    return (req) => {
      let address = peers.get(req.socket);
      if (address === undefined) {
        address = normaliseIp(req.socket.remoteAddress) ?? UNKNOWN_CLIENT;
        if (address !== UNKNOWN_CLIENT) peers.set(req.socket, address);
      }
      return address;
    };
  }
  const trust = proxyaddr.compile([...trustedProxyCidrs]);
  return (req) => {
    if (req.socket.remoteAddress === undefined) return UNKNOWN_CLIENT;
    // [peer, then X-Forwarded-For right to left], cut after the first address that is not trusted.
    const chain = proxyaddr.all(req as Parameters<typeof proxyaddr.all>[0], trust);
    // The last entry is the client, unless a trusted proxy forwarded garbage: then the nearest valid
    // address (a trusted hop) is used, never the garbage, which would let it name a bucket.
    for (let index = chain.length - 1; index >= 0; index -= 1) {
      const address = normaliseIp(chain[index]);
      if (address !== undefined) return address;
    }
    return UNKNOWN_CLIENT;
  };
}

/** `::ffff:127.0.0.1` → `127.0.0.1`; IPv6 in its compressed form; undefined when not an IP. */
export function normaliseIp(address: string | undefined): string | undefined {
  if (address === undefined || !isStrictIp(address)) return undefined;
  return ipaddr.process(address).toString();
}
