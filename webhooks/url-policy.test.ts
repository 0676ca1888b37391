import { describe, expect, it } from 'vitest';
import { isPrivateAddress, webhookUrlProblem } from './url-policy.ts';

const production = (resolved: Record<string, string[]> = {}) => ({
  production: true,
  resolve: async (host: string) => {
    if (!resolved[host]) throw new Error('ENOTFOUND');
    return resolved[host]!;
  },
});

describe('where webhooks may go', () => {
  it('in production takes https URLs of public hosts only', async () => {
    expect(await webhookUrlProblem('https://bot.example.com/hook', production({ 'bot.example.com': ['93.184.216.34'] }))).toBeUndefined();
    expect(await webhookUrlProblem('http://bot.example.com/hook', production({ 'bot.example.com': ['93.184.216.34'] }))).toMatch(/must use https in production/);
    for (const url of ['https://127.0.0.1/h', 'https://10.1.2.3/h', 'https://169.254.169.254/latest', 'https://[::1]/h', 'https://[fd00::1]/h', 'https://[::ffff:192.168.1.1]/h', 'https://100.64.0.1/h']) {
      expect(await webhookUrlProblem(url, production()), url).toMatch(/private, loopback or reserved/);
    }
    expect(await webhookUrlProblem('https://localhost/h', production())).toMatch(/public host/);
    expect(await webhookUrlProblem('https://intranet/h', production())).toMatch(/public host/);
    expect(await webhookUrlProblem('https://rebind.example.com/h', production({ 'rebind.example.com': ['93.184.216.34', '192.168.0.10'] })))
      .toBe("must not resolve to a private, loopback or reserved address ('rebind.example.com' resolves to 192.168.0.10)");
    expect(await webhookUrlProblem('https://nowhere.example.com/h', production())).toMatch(/resolves/);
  });

  it('anywhere refuses what is not an http(s) URL, credentials and fragments', async () => {
    const dev = { production: false };
    expect(await webhookUrlProblem('http://127.0.0.1:8080/hook', dev)).toBeUndefined();
    expect(await webhookUrlProblem('ftp://example.com/x', dev)).toMatch(/http\(s\) URL/);
    expect(await webhookUrlProblem('not a url', dev)).toMatch(/absolute URL/);
    expect(await webhookUrlProblem('https://user:pw@example.com/', dev)).toMatch(/credentials/);
    expect(await webhookUrlProblem('https://example.com/#x', dev)).toMatch(/fragment/);
  });

  it('refuses IPv6 literals that embed or translate to an internal IPv4 address, typed or resolved; a global unicast address passes', async () => {
    // IPv4-compatible, SIIT (RFC 6145), NAT64 local-use (RFC 8215), 6to4 (RFC 3056) of 127.0.0.1, and site-local (RFC 3879).
    const embedded = ['::7f00:1', '::ffff:0:7f00:1', '64:ff9b:1::7f00:1', '2002:7f00:1::', 'fec0::1'];
    for (const address of embedded) {
      expect(isPrivateAddress(address), address).toBe(true);
      expect(await webhookUrlProblem(`https://[${address}]/h`, production()), address).toMatch(/private, loopback or reserved/);
      expect(await webhookUrlProblem('https://bot.example.com/h', production({ 'bot.example.com': [address] })), address)
        .toBe(`must not resolve to a private, loopback or reserved address ('bot.example.com' resolves to ${address})`);
    }
    // Other special-purpose space outside global unicast: Teredo, documentation, NAT64 well-known, ORCHIDv2, discard.
    for (const address of ['2001::1', '2001:db8::1', '64:ff9b::808:808', '2001:20::1', '100::1', '::', '::ffff:10.0.0.1']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    expect(await webhookUrlProblem('https://[2606:4700:4700::1111]/h', production())).toBeUndefined();
    expect(await webhookUrlProblem('https://bot.example.com/h', production({ 'bot.example.com': ['2a00:1450:4001:82b::200e', '93.184.216.34'] }))).toBeUndefined();
    expect(isPrivateAddress('::ffff:8.8.8.8')).toBe(false); // an IPv4-mapped public address is that IPv4 address
  });

  it('tells private from public addresses', () => {
    expect(isPrivateAddress('8.8.8.8')).toBe(false);
    expect(isPrivateAddress('2606:4700:4700::1111')).toBe(false);
    expect(isPrivateAddress('172.16.5.4')).toBe(true);
    expect(isPrivateAddress('0.0.0.0')).toBe(true);
    expect(isPrivateAddress('not-an-ip')).toBe(true);
  });
});
