import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may be sent. In production only `https` to public addresses: no loopback,
 * private, link-local (cloud metadata), CGNAT, multicast or reserved ranges, checked on the URL's
 * literal address, on every address its name resolves to at registration, and again on the address
 * each delivery connects to (a name may be re-pointed later). Elsewhere (development, tests) `http`
 * and loopback receivers are allowed, so a bot on the same machine works.
 */

// Two lists: one BlockList matches IPv4 addresses against IPv4-mapped IPv6 rules too.
const blockedV4 = new BlockList();
const blockedV6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blockedV4.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) blockedV6.addSubnet(network, prefix, 'ipv6');

/** True for an address a production webhook must never reach. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blockedV4.check(mapped[1]!, 'ipv4');
    return blockedV6.check(address, 'ipv6');
  }
  return blockedV4.check(address, 'ipv4');
}

export interface UrlPolicy {
  /** Production rules (https, public addresses only). */
  production: boolean;
  /** Name resolution (tests may replace it). */
  resolve?: (host: string) => Promise<string[]>;
}

const defaultResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Why `raw` may not receive webhooks, or undefined when it may. The message completes "url ...". */
export async function webhookUrlProblem(raw: string, policy: UrlPolicy): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `must be an absolute URL, received '${raw}'`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an http(s) URL, received '${raw}'`;
  if (url.username || url.password) return 'must not carry credentials (user:password@)';
  if (url.hash) return 'must not carry a #fragment';
  if (!policy.production) return undefined;
  if (url.protocol !== 'https:') return `must use https in production, received '${raw}'`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return isPrivateAddress(host) ? `must not point to a private, loopback or reserved address, received '${host}'` : undefined;
  if (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.')) return `must name a public host, received '${host}'`;
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? defaultResolve)(host);
  } catch {
    return `must name a host that resolves, '${host}' does not`;
  }
  const inside = addresses.find(isPrivateAddress);
  if (inside) return `must not resolve to a private, loopback or reserved address ('${host}' resolves to ${inside})`;
  return undefined;
}
