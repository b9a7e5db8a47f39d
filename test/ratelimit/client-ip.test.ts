import type { IncomingMessage } from 'node:http';
import { createClientIpResolver, normaliseIp, UNKNOWN_CLIENT } from '../../src/ratelimit/client-ip';

function requestFrom(remoteAddress: string | undefined, forwardedFor?: string): IncomingMessage {
  const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  return { socket: { remoteAddress }, headers } as unknown as IncomingMessage;
}

describe('client IP resolution', () => {
  it('uses the TCP peer, normalised, when no proxy is trusted, and never reads X-Forwarded-For', () => {
    const resolve = createClientIpResolver([]);
    expect(resolve(requestFrom('203.0.113.9', '1.2.3.4'))).toBe('203.0.113.9');
    expect(resolve(requestFrom('::ffff:203.0.113.9'))).toBe('203.0.113.9');
    expect(resolve(requestFrom('2001:DB8:0:0:0:0:0:1'))).toBe('2001:db8::1');
    expect(resolve(requestFrom(undefined))).toBe(UNKNOWN_CLIENT);
  });

  const trusted = createClientIpResolver(['10.0.0.0/8', '192.168.1.1']);
  const cases: [string, string, string | undefined, string][] = [
    ['untrusted peer: header ignored', '203.0.113.9', '1.1.1.1', '203.0.113.9'],
    ['trusted peer, no header: the peer', '10.0.0.2', undefined, '10.0.0.2'],
    ['trusted peer: the hop it reports', '10.0.0.2', '198.51.100.7', '198.51.100.7'],
    ['forged hops left of the first untrusted one are ignored', '10.0.0.2', '6.6.6.6, 198.51.100.7', '198.51.100.7'],
    ['chain of trusted proxies', '10.0.0.2', '198.51.100.7, 192.168.1.1, 10.9.9.9', '198.51.100.7'],
    ['IPv4-mapped peer matches an IPv4 CIDR', '::ffff:10.0.0.2', '198.51.100.7', '198.51.100.7'],
    ['IPv4-mapped hop is normalised', '10.0.0.2', '::ffff:198.51.100.7', '198.51.100.7'],
    ['garbage from a trusted proxy never names a bucket', '10.0.0.2', 'not-an-ip', '10.0.0.2'],
    ['legacy IPv4 spelling is not a second name for an address', '10.0.0.2', '3325256711', '10.0.0.2'],
    ['only trusted hops in the header: the furthest one', '10.0.0.2', '10.1.1.1', '10.1.1.1'],
  ];
  it.each(cases)('%s', (_label, peer, forwardedFor, expected) => {
    expect(trusted(requestFrom(peer, forwardedFor))).toBe(expected);
  });

  it('normalises addresses and refuses what is not one', () => {
    expect(normaliseIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normaliseIp('::1')).toBe('::1');
    expect(normaliseIp('127.1')).toBeUndefined();
    expect(normaliseIp('example.com')).toBeUndefined();
  });
});
