import type { WalletProof } from '../../auth/proof.ts';
import { adapterOf } from '../../chains/adapters.ts';
import { unprocessable } from '../errors.ts';
import { z } from '../openapi/operations.ts';
import { issuesToMessages, parseOrThrow } from '../validation.ts';
import { text, timestamp } from './common.ts';

/** Request and response schemas of /v1/auth/*. Requests are strict: unknown fields are a 422. */

const EVM_EXAMPLE = '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23';
const STELLAR_EXAMPLE = 'GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H';
const SIWE_EXAMPLE = [
  'localhost:3000 wants you to sign in with your Ethereum account:',
  EVM_EXAMPLE,
  '',
  'Sign in to the Cross-Chain Liquidity Relayer.',
  '',
  'URI: http://localhost:3000',
  'Version: 1',
  'Chain ID: 1',
  'Nonce: 5f1c0e9d2b7a4c3e8f6a1b2c3d4e5f60',
  'Issued At: 2026-11-22T10:00:00.000Z',
  'Expiration Time: 2026-11-22T10:05:00.000Z',
].join('\n');

const quote = (value: unknown) => `'${String(value).slice(0, 100)}'`;

const chainKind = z.enum(['EVM', 'STELLAR'], { error: (issue) => (issue.input === undefined ? 'is required' : 'must be EVM or STELLAR') });

export const challengeBody = z
  .object({
    address: text('must be a wallet address string').openapi({
      pattern: '^(0x[0-9a-fA-F]{40}|G[A-Z2-7]{55})$',
      description: 'An EVM address (chainKind EVM) or a Stellar account G-address (chainKind STELLAR).',
      example: EVM_EXAMPLE,
    }),
    chainKind,
  })
  .strict()
  .superRefine((body, ctx) => {
    const adapter = adapterOf(body.chainKind);
    if (!adapter.isWalletAddress(body.address)) {
      ctx.addIssue({ code: 'custom', path: ['address'], message: `must be ${adapter.walletAddressRule}, received ${quote(body.address)}` });
    }
  })
  .openapi('ChallengeRequest', { example: { address: EVM_EXAMPLE, chainKind: 'EVM' } });

const evmChallenge = z
  .object({
    chainKind: z.literal('EVM'),
    address: z.string().openapi({ description: 'EIP-55 checksummed, whatever case was sent.', example: EVM_EXAMPLE }),
    nonce: z.string().openapi({ example: '5f1c0e9d2b7a4c3e8f6a1b2c3d4e5f60' }),
    domain: z.string().openapi({ example: 'localhost:3000' }),
    uri: z.string().openapi({ example: 'http://localhost:3000' }),
    expiresAt: timestamp,
    message: z.string().openapi({ description: 'The complete EIP-4361 text to sign as a personal message, unchanged.', example: SIWE_EXAMPLE }),
  })
  .openapi('EvmChallenge');

const stellarChallenge = z
  .object({
    chainKind: z.literal('STELLAR'),
    address: z.string().openapi({ example: STELLAR_EXAMPLE }),
    transaction: z.string().openapi({ description: 'SEP-10 challenge transaction signed by the server (base64 XDR); co-sign it with the account key.' }),
    networkPassphrase: z.string().openapi({ example: 'Test SDF Network ; September 2015' }),
    expiresAt: timestamp,
  })
  .openapi('StellarChallenge');

export const challengeResponse = z.discriminatedUnion('chainKind', [evmChallenge, stellarChallenge]);

const evmLogin = z
  .object({
    chainKind: z.literal('EVM'),
    message: text('must be the SIWE message string of the challenge')
      .min(1, { error: 'must not be empty' }).max(4096, { error: 'must be at most 4096 characters' })
      .openapi({ example: SIWE_EXAMPLE }),
    signature: text('must be a 0x-prefixed hex signature')
      .regex(/^0x[0-9a-fA-F]{2,1024}$/, { error: 'must be a 0x-prefixed hex signature' })
      .openapi({ description: 'EIP-191 personal-message signature of `message` (65 bytes).', example: `0x${'ab'.repeat(65)}` }),
  })
  .strict()
  .openapi('EvmLogin');

const stellarLogin = z
  .object({
    chainKind: z.literal('STELLAR'),
    transaction: text('must be a base64 XDR string')
      .max(16_384, { error: 'must be at most 16384 characters' })
      .regex(/^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, { error: 'must be base64 XDR' })
      .openapi({ description: 'The challenge transaction co-signed by the account key (base64 XDR).' }),
  })
  .strict()
  .openapi('StellarLogin');

/** The login (and link) body as documented: one shape per chain kind. */
export const walletProofBody = z.discriminatedUnion('chainKind', [evmLogin, stellarLogin]);

/** Each sign-in protocol's body: its schema and its own fields. */
const LOGIN_OF = {
  SIWE: { schema: evmLogin, fields: ['message', 'signature'] },
  'SEP-10': { schema: stellarLogin, fields: ['transaction'] },
} as const;
const KINDS = chainKind.options;

/**
 * Parses a login/link body into a `WalletProof`, or throws a 422 naming each field: the chain kind
 * first, then the fields that kind needs; fields of the other kind mean the body's `chainKind` is
 * not the challenge's.
 */
export function parseWalletProof(body: unknown): WalletProof {
  const { chainKind: kind } = parseOrThrow(z.object({ chainKind }).loose(), body);
  const login = LOGIN_OF[adapterOf(kind).signInProtocol];
  const record = body as Record<string, unknown>;
  // A field only another kind's login has: that kind is what the caller meant.
  const otherKinds = KINDS.filter((k) => LOGIN_OF[adapterOf(k).signInProtocol] !== login);
  const foreignOf = (k: (typeof KINDS)[number]) => LOGIN_OF[adapterOf(k).signInProtocol].fields
    .filter((field) => field in record && !(login.fields as readonly string[]).includes(field));
  const other = otherKinds.find((k) => foreignOf(k).length > 0) ?? otherKinds[0]!;
  const foreign: string[] = foreignOf(other);
  const rest = Object.fromEntries(Object.entries(record).filter(([key]) => !foreign.includes(key)));
  const result = login.schema.safeParse(rest, { reportInput: true });
  const messages = result.success ? [] : issuesToMessages(result.error.issues);
  if (foreign.length > 0) {
    messages.unshift(`chainKind is ${kind} but ${foreign.join(', ')} ${foreign.length > 1 ? 'belong' : 'belongs'} ` +
      `to a ${other} login: chainKind must match the challenge's`);
  }
  if (messages.length > 0 || !result.success) throw unprocessable(messages);
  return result.data as WalletProof;
}

export const refreshBody = z
  .object({ refresh: text('must be the refresh token string').min(1, { error: 'must not be empty' }).max(4096, { error: 'must be at most 4096 characters' }) })
  .strict()
  .openapi('RefreshRequest');

export const walletSchema = z
  .object({ address: z.string().openapi({ example: EVM_EXAMPLE }), chainKind: z.enum(['EVM', 'STELLAR']), createdAt: timestamp })
  .openapi('Wallet');

export const userSchema = z
  .object({ id: z.string().uuid(), wallets: z.array(walletSchema), createdAt: timestamp })
  .openapi('User');

export const tokensSchema = z
  .object({
    access: z.string().openapi({ description: 'Access JWT (HS256, `typ: access`); send as `Authorization: Bearer`.' }),
    refresh: z.string().openapi({ description: 'Refresh JWT (`typ: refresh`), single use: each refresh returns a new one.' }),
  })
  .openapi('Tokens');

export const loginResponse = z.object({ user: userSchema, tokens: tokensSchema }).openapi('LoginResponse');
export const refreshResponse = z.object({ tokens: tokensSchema }).openapi('RefreshResponse');

/** SEP-10's challenge request (GET ?account=), beside the spec's POST /v1/auth/challenge. */
export const sep10ChallengeQuery = z
  .strictObject({
    account: text('must be a Stellar account G-address')
      .refine((value) => adapterOf('STELLAR').isWalletAddress(value), { error: 'must be a Stellar account G-address (muxed M-addresses are not supported)' })
      .openapi({ pattern: '^G[A-Z2-7]{55}$', example: STELLAR_EXAMPLE }),
    home_domain: text().max(64, { error: 'must be at most 64 characters' }).optional()
      .openapi({ description: 'The home domain the wallet resolved stellar.toml from; must be this service\'s.' }),
    client_domain: text().max(255).optional().openapi({ description: 'Not supported (422): no client-domain signing.' }),
    memo: text().max(32).optional().openapi({ description: 'Not supported (422): no memo-identified (shared) accounts.' }),
  })
  .openapi('Sep10ChallengeQuery');

export const sep10ChallengeResponse = z
  .object({
    transaction: z.string().openapi({ description: 'The SEP-10 challenge, signed by SIGNING_KEY (base64 XDR): co-sign it with the account key.' }),
    network_passphrase: z.string().openapi({ example: 'Test SDF Network ; September 2015' }),
  })
  .openapi('Sep10Challenge');

export const sep10TokenBody = z
  .strictObject({ transaction: stellarLogin.shape.transaction })
  .openapi('Sep10TokenRequest');

export const sep10TokenResponse = z
  .object({
    token: z.string().openapi({ description: 'The access JWT of a new session, as POST /v1/auth/login issues it: send as `Authorization: Bearer`.' }),
    refresh: z.string().openapi({ description: 'Not in SEP-10: the session\'s refresh token, for POST /v1/auth/refresh.' }),
  })
  .openapi('Sep10Token');
