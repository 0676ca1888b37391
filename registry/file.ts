import { z } from 'zod';
import { adapterOf } from '../chains/adapters.ts';
import { CHAIN_KINDS, type ChainKind } from '../domain/index.ts';

/**
 * The registry file operators import (`npm run registry -- import FILE`) and the devnet writes.
 * Beyond what the API shows, a chain may carry its RPC URL, the confirmation depth the service
 * waits for, and (Stellar) its network passphrase; a token its `asset` and a route its `rate`, which
 * price the route (a route that cannot be priced is refused on import).
 */
const chainEntry = z.strictObject({
  name: z.string().min(1).max(128),
  chainId: z.string().regex(/^[0-9]{1,78}$/, 'must be a numeric chain ID string'),
  kind: z.enum(CHAIN_KINDS),
  adManagerAddress: z.string(),
  orderPortalAddress: z.string(),
  // The service's providers of the chain, best first; `rpcUrl` is one provider (the older spelling).
  rpcUrl: z.string().url().optional(),
  rpcUrls: z.array(z.string().url().refine((url) => /^https?:\/\//.test(url), 'must be an http(s) URL'))
    .min(1, 'must list at least one provider').max(16, 'must list at most 16 providers').optional(),
  // How many providers must agree on a fact the books act on; default a majority of those listed.
  rpcQuorum: z.number().int().min(1, 'must be at least 1').optional(),
  // A depth of 0 would accept a transaction still pending: at least the including block.
  confirmations: z.number().int().min(1, 'must be at least 1 (0 would accept a pending transaction)').max(10_000).optional(),
  networkPassphrase: z.string().min(1).optional(),
  // Stellar: the RPC URL clients are told to use (GET /v1/chains); rpcUrl stays the service's own, never shown.
  publicRpcUrl: z.string().url().refine((url) => /^https?:\/\//.test(url), 'must be an http(s) URL').optional(),
});

const tokenRef = z.strictObject({ chainId: z.string().min(1), address: z.string().min(1) });

const tokenEntry = z.strictObject({
  chainId: z.string().min(1),
  symbol: z.string().min(1).max(32),
  name: z.string().min(1).max(128),
  address: z.string().min(1),
  decimals: z.number().int().min(0, 'must be between 0 and 255').max(255, 'must be between 0 and 255'),
  kind: z.enum(['NATIVE', 'ERC20', 'SEP41']),
  // What the token stands for; tokens of one asset convert by their decimals. Defaults to the symbol.
  asset: z.string().regex(/^[A-Z0-9._-]{1,32}$/, 'must be 1 to 32 capitals, digits, dots, dashes or underscores (e.g. USD)').optional(),
});

const positiveUnits = z.string().regex(/^[1-9][0-9]{0,77}$/, 'must be a positive integer decimal string');

const routeEntry = z.strictObject({
  adToken: tokenRef,
  orderToken: tokenRef,
  // Needed between tokens of different assets: `orderUnits` base units of the order token are worth
  // `adUnits` base units of the ad token (domain/route-pricing.ts).
  rate: z.strictObject({ orderUnits: positiveUnits, adUnits: positiveUnits }).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const registryFileSchema = z.strictObject({
  chains: z.array(chainEntry).default([]),
  tokens: z.array(tokenEntry).default([]),
  routes: z.array(routeEntry).default([]),
});

export type RegistryFile = z.infer<typeof registryFileSchema>;
export type ChainEntry = z.infer<typeof chainEntry>;
export type TokenEntry = z.infer<typeof tokenEntry>;
export type RouteEntry = z.infer<typeof routeEntry>;

/** Raised with every problem of a registry file, each naming its entry and field. */
export class RegistryFileError extends Error {
  constructor(readonly problems: string[]) {
    super(`registry file is invalid:\n  ${problems.join('\n  ')}`);
  }
}

/**
 * Problems of a chain's provider settings, each `field: why`. URLs are named by their position,
 * never spelled out: they may carry API keys, and the report is printed.
 */
function providerProblems(chain: ChainEntry): string[] {
  const problems: string[] = [];
  if (chain.rpcUrl !== undefined && chain.rpcUrls !== undefined) problems.push('rpcUrl: give rpcUrls or rpcUrl, not both');
  const urls = chain.rpcUrls ?? (chain.rpcUrl !== undefined ? [chain.rpcUrl] : []);
  const seen = new Map<string, number>();
  urls.forEach((url, j) => {
    const first = seen.get(url);
    if (first !== undefined) problems.push(`rpcUrls.${j}: the same provider as rpcUrls.${first}`);
    else seen.set(url, j);
  });
  if (chain.rpcQuorum !== undefined) {
    if (urls.length === 0) problems.push('rpcQuorum: needs rpcUrls (or rpcUrl) to count providers');
    else if (chain.rpcQuorum > urls.length) problems.push(`rpcQuorum: must be at most the ${urls.length} provider(s) listed, received ${chain.rpcQuorum}`);
  }
  return problems;
}

/**
 * Parses and checks a registry file against itself and the chains already registered
 * (`knownChainKinds`: chain id -> kind). Returns entries with addresses in canonical form, or
 * throws `RegistryFileError` listing every problem.
 */
export function validateRegistryFile(input: unknown, knownChainKinds: Map<string, ChainKind>): RegistryFile {
  const parsed = registryFileSchema.safeParse(input);
  if (!parsed.success) {
    throw new RegistryFileError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'file'}: ${issue.message}`));
  }
  const file = parsed.data;
  const problems: string[] = [];
  const kinds = new Map(knownChainKinds);
  const seenChains = new Set<string>();
  file.chains.forEach((chain, i) => {
    if (seenChains.has(chain.chainId)) problems.push(`chains.${i}.chainId: chain ${chain.chainId} appears twice`);
    seenChains.add(chain.chainId);
    kinds.set(chain.chainId, chain.kind);
    const adapter = adapterOf(chain.kind);
    for (const field of ['adManagerAddress', 'orderPortalAddress'] as const) {
      const problem = adapter.contractAddressProblem(chain[field]);
      if (problem) problems.push(`chains.${i}.${field}: ${problem}`);
      else chain[field] = adapter.canonicalAddress(chain[field]);
    }
    for (const problem of adapter.registryProblems(chain)) problems.push(`chains.${i}.${problem}`);
    for (const problem of providerProblems(chain)) problems.push(`chains.${i}.${problem}`);
  });
  const tokenKey = (chainId: string, address: string) => `${chainId}/${address.toLowerCase()}`;
  const fileTokens = new Set<string>();
  file.tokens.forEach((token, i) => {
    const kind = kinds.get(token.chainId);
    if (!kind) {
      problems.push(`tokens.${i}.chainId: chain ${token.chainId} is neither in this file nor registered`);
      return;
    }
    const problem = adapterOf(kind).tokenProblem(token);
    if (problem) {
      problems.push(`tokens.${i}: ${problem}`);
      return;
    }
    token.address = adapterOf(kind).canonicalAddress(token.address);
    const key = tokenKey(token.chainId, token.address);
    if (fileTokens.has(key)) problems.push(`tokens.${i}: token ${token.address} on chain ${token.chainId} appears twice`);
    fileTokens.add(key);
  });
  file.routes.forEach((route, i) => {
    if (route.adToken.chainId === route.orderToken.chainId) {
      problems.push(`routes.${i}: adToken and orderToken must be on different chains (both on ${route.adToken.chainId})`);
    }
    for (const side of ['adToken', 'orderToken'] as const) {
      const kind = kinds.get(route[side].chainId);
      if (!kind) {
        problems.push(`routes.${i}.${side}.chainId: chain ${route[side].chainId} is neither in this file nor registered`);
        continue;
      }
      try {
        route[side].address = adapterOf(kind).canonicalAddress(route[side].address);
      } catch {
        problems.push(`routes.${i}.${side}.address: not a valid ${kind} address, received '${route[side].address}'`);
      }
    }
  });
  if (problems.length > 0) throw new RegistryFileError(problems);
  return file;
}
