import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may be sent. In production only `https` to public addresses, checked on the URL's
 * literal address, on every address its name resolves to at registration, and again on the address
 * each delivery connects to (a name may be re-pointed later). Elsewhere (development, tests) `http`
 * and loopback receivers are allowed, so a bot on the same machine works.
 *
 * "Public" is `ipaddr.js`'s classification (the IANA special-purpose registries, maintained there,
 * not a hand list here): only an address whose range is `unicast` passes, and for IPv6 only inside
 * 2000::/3, the one block IANA allocates for global unicast. So every IPv6 form that embeds or
 * translates to an IPv4 address is refused: IPv4-compatible (::a.b.c.d, which ipaddr.js calls
 * unicast), SIIT (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16),
 * Teredo (2001::/32), as are site-local (fec0::/10), unique-local, link-local and the rest; on a
 * network with NAT64 or 6to4 those reach internal IPv4 hosts. An IPv4-mapped address
 * (::ffff:a.b.c.d) is the IPv4 address it maps, judged as such.
 */

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** True for an address a production webhook must never reach (anything not a global unicast address, or not an address). */
export function isPrivateAddress(address: string): boolean {
  if (isIP(address) === 0) return true;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process(): an IPv4-mapped IPv6 address becomes the IPv4 address it maps.
    parsed = ipaddr.process(address);
  } catch {
    return true;
  }
  if (parsed.range() !== 'unicast') return true;
  return parsed.kind() === 'ipv6' && !parsed.match(GLOBAL_UNICAST_V6);
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
