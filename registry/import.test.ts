import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { RegistryFileError } from './file.ts';
import { importRegistry } from './import.ts';

const demo = () => JSON.parse(readFileSync('devnet/registry.json', 'utf8'));

describe('registry import', () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it('loads the demo registry: two EVM devnets and Stellar, NATIVE/ERC20/SEP41 tokens, routes both ways', async () => {
    const report = await importRegistry(db.knex, demo());
    expect(report.counts.chains.created).toBe(3);
    const chains = await db.knex('chains').orderBy('chain_id').select('chain_id', 'kind');
    expect(chains.map((c) => `${c.chain_id}:${c.kind}`)).toEqual(expect.arrayContaining(['31337:EVM', '31338:EVM']));
    expect(chains.some((c) => c.kind === 'STELLAR')).toBe(true);
    const kinds = new Set((await db.knex('tokens').select('kind')).map((t) => t.kind));
    expect([...kinds].sort()).toEqual(['ERC20', 'NATIVE', 'SEP41']);
    const pairs = await db.knex('routes')
      .join('tokens as a', 'a.id', 'routes.ad_token_id').join('tokens as o', 'o.id', 'routes.order_token_id')
      .select('a.id as a', 'o.id as o');
    for (const { a, o } of pairs) expect(pairs.some((p) => p.a === o && p.o === a), 'reverse route exists').toBe(true);
  });

  it('is idempotent: importing the same file again changes nothing', async () => {
    const before = await db.knex('chains').select('id', 'updated_at');
    const report = await importRegistry(db.knex, demo());
    expect(report.changes).toEqual([]);
    expect(report.counts.tokens.created + report.counts.tokens.updated).toBe(0);
    expect(await db.knex('chains').select('id', 'updated_at')).toEqual(before);
  });

  it('reports what changed: an updated RPC URL and a new route', async () => {
    const file = demo();
    file.chains[0].rpcUrl = 'http://10.0.0.5:8545';
    file.chains[0].confirmations = 12;
    file.tokens.push({ chainId: '31338', symbol: 'WBTC', name: 'Wrapped BTC', address: '0x2260fac5e5542a773aa44fbcfedf7c193bc2c599', decimals: 8, kind: 'ERC20' });
    const report = await importRegistry(db.knex, file);
    expect(report.changes).toEqual([
      'updated chain 31337: rpc_url, confirmations',
      'created token WBTC on 31338',
    ]);
    const token = await db.knex('tokens').where({ symbol: 'WBTC' }).first();
    expect(token.address).toBe('0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599'); // stored EIP-55
  });

  it('rejects an invalid file naming each problem, and writes nothing', async () => {
    const counts = async () => (await db.knex('tokens').count('* as n'))[0]!.n;
    const before = await counts();
    const file = demo();
    file.chains[0].adManagerAddress = 'CAAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQC526';
    file.tokens.push({ chainId: '31337', symbol: 'BAD', name: 'Bad', address: '0x1234', decimals: 300, kind: 'ERC20' });
    file.tokens.push({ chainId: '148', symbol: 'EVMISH', name: 'x', address: '0x2260fac5e5542a773aa44fbcfedf7c193bc2c599', decimals: 7, kind: 'SEP41' });
    file.tokens.push({ chainId: '31337', symbol: 'XN', name: 'x', address: '0x2260fac5e5542a773aa44fbcfedf7c193bc2c599', decimals: 7, kind: 'NATIVE' });
    file.routes.push({ adToken: { chainId: '31337', address: '0x0000000000000000000000000000000000000000' }, orderToken: { chainId: '31337', address: '0x0000000000000000000000000000000000000000' } });
    const error = await importRegistry(db.knex, file).catch((e) => e);
    expect(error).toBeInstanceOf(RegistryFileError);
    expect((error as RegistryFileError).problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^tokens\.\d+\.decimals: must be between 0 and 255/),
    ]));
    // Schema problems are reported first; fix them and the semantic ones show.
    file.tokens.find((t: { symbol: string }) => t.symbol === 'BAD').decimals = 6;
    const second = (await importRegistry(db.knex, file).catch((e) => e)) as RegistryFileError;
    expect(second.problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^chains\.0\.adManagerAddress: must be a 0x-prefixed 20-byte EVM address/),
      expect.stringMatching(/^tokens\.\d+: address must be a 0x-prefixed 20-byte EVM address, received '0x1234'/),
      expect.stringMatching(/^tokens\.\d+: address must be a Stellar contract strkey/),
      expect.stringMatching(/^tokens\.\d+: a NATIVE token on an EVM chain has the all-zero address/),
      expect.stringMatching(/^routes\.\d+: adToken and orderToken must be on different chains/),
    ]));
    expect(await counts()).toBe(before);
  });

  it('rejects a route to a token that exists nowhere, rolling back the whole file', async () => {
    const file = { chains: [], tokens: [{ chainId: '31337', symbol: 'NEW', name: 'New', address: '0x1111111111111111111111111111111111111111', decimals: 18, kind: 'ERC20' }],
      routes: [{ adToken: { chainId: '31337', address: '0x1111111111111111111111111111111111111111' }, orderToken: { chainId: '31338', address: '0x2222222222222222222222222222222222222222' } }] };
    const error = (await importRegistry(db.knex, file).catch((e) => e)) as RegistryFileError;
    expect(error.problems).toEqual(['routes.0.orderToken: no token 0x2222222222222222222222222222222222222222 on chain 31338']);
    expect(await db.knex('tokens').where({ symbol: 'NEW' }).first()).toBeUndefined();
  });

  it('prices every demo route: one asset by its decimals, XLM and ETH by their stated rate', async () => {
    const routes = await db.knex('routes')
      .join('tokens as a', 'a.id', 'routes.ad_token_id').join('tokens as o', 'o.id', 'routes.order_token_id')
      .select('a.symbol as ad', 'a.asset as adAsset', 'o.symbol as order', 'o.asset as orderAsset', 'routes.rate_order_units as orderUnits', 'routes.rate_ad_units as adUnits');
    for (const route of routes) {
      if (route.adAsset === route.orderAsset) expect(route.orderUnits, `${route.ad} <- ${route.order}`).toBeNull();
      else expect([route.orderUnits, route.adUnits], `${route.ad} <- ${route.order}`).not.toEqual([null, null]);
    }
    // TUSD has 6 decimals on anvil and 7 on Stellar: one asset, so priced by the decimals.
    expect(new Set(routes.filter((r) => r.ad === 'TUSD' && r.order === 'TUSD').map((r) => `${r.adAsset}/${r.orderAsset}`))).toEqual(new Set(['USD/USD']));
  });

  it('refuses a route between different assets that states no rate, rolling back the whole file, and takes it with one', async () => {
    const token = (chainId: string, symbol: string, address: string, asset?: string) => ({ chainId, symbol, name: symbol, address, decimals: 8, kind: 'ERC20', ...(asset ? { asset } : {}) });
    const route = { adToken: { chainId: '31337', address: '0x3333333333333333333333333333333333333333' }, orderToken: { chainId: '31338', address: '0x4444444444444444444444444444444444444444' } };
    const file = { chains: [], tokens: [token('31337', 'WBTC', route.adToken.address, 'BTC'), token('31338', 'WETH', route.orderToken.address)], routes: [route] };
    const error = (await importRegistry(db.knex, file).catch((e) => e)) as RegistryFileError;
    expect(error).toBeInstanceOf(RegistryFileError);
    expect(error.problems).toEqual(['routes.0: cannot be priced: its tokens are different assets (WBTC BTC, WETH WETH) and it states no rate']);
    expect(await db.knex('tokens').where({ symbol: 'WBTC', chain_id: db.knex('chains').select('id').where({ chain_id: '31337' }) }).first()).toBeUndefined();

    const priced = { ...file, routes: [{ ...route, rate: { orderUnits: '20', adUnits: '1' } }] };
    const report = await importRegistry(db.knex, priced);
    expect(report.counts.routes.created).toBe(1);
    const stored = await db.knex('routes').whereNotNull('rate_order_units').where({ rate_ad_units: '1', rate_order_units: '20' }).first();
    expect(stored).toBeDefined();
    expect((await importRegistry(db.knex, priced)).changes).toEqual([]);
  });
});

describe('npm run registry -- import FILE', () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });
  const run = (args: string[]) =>
    promisify(execFile)('node', ['--import', 'tsx', 'registry/cli.ts', ...args], { env: { ...process.env, DATABASE_URL: db.url } })
      .then((r) => ({ code: 0, ...r }), (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }));

  it('imports, reports the changes, and exits 1 on an invalid file', async () => {
    const first = await run(['import', 'devnet/registry.json']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('created chain 31337');
    expect(first.stdout).toMatch(/chains: 3 created, 0 updated, 0 unchanged/);
    const again = await run(['import', 'devnet/registry.json']);
    expect(again.stdout).toMatch(/chains: 0 created, 0 updated, 3 unchanged/);
    const dir = mkdtempSync(path.join(tmpdir(), 'registry-'));
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ chains: [{ name: 'x', chainId: 'abc', kind: 'EVM', adManagerAddress: '0x', orderPortalAddress: '0x' }] }));
    const bad = await run(['import', path.join(dir, 'bad.json')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('chains.0.chainId: must be a numeric chain ID string');
    expect((await run([])).code).toBe(2);
  });
});
