import { z } from '../openapi/operations.ts';
import { ADDRESS_PATTERN, amount, chainId, cursor, limit, shortText, text, uuid } from './common.ts';
import { AD_STATUSES, TRADE_STATUSES, type TradeStatus } from '../../domain/index.ts';

/** Query schemas of the list endpoints. Unknown parameters are rejected: a typo must not silently match everything. */
const listQuery = <T extends z.ZodRawShape>(shape: T) => z.strictObject({ ...shape, cursor, limit });

/** A wallet filter holds to the pattern the document gives it: anything else is 422 naming the filter, not an empty page. */
const walletFilter = shortText(128)
  .regex(new RegExp(ADDRESS_PATTERN), { error: 'must be a wallet address: 0x and 40 hex digits (EVM, any case) or a Stellar strkey' })
  .openapi({ pattern: ADDRESS_PATTERN, description: 'A wallet address: EVM (any case) or Stellar.' });

export const chainsQuery = listQuery({
  name: shortText(128).optional().openapi({ description: 'Exact chain name.' }),
  chainId: chainId.optional(),
});

export const routesQuery = listQuery({
  adTokenId: uuid.optional(),
  orderTokenId: uuid.optional(),
  adChainId: chainId.optional(),
  orderChainId: chainId.optional(),
  symbol: shortText(32).optional().openapi({ description: 'Matches routes where either token has this symbol.' }),
});

export const adsQuery = listQuery({
  routeId: uuid.optional(),
  creatorAddress: walletFilter.optional(),
  adChainId: chainId.optional().openapi({ description: 'Chain ID of the ad (source) token.' }),
  orderChainId: chainId.optional().openapi({ description: 'Chain ID of the order (destination) token.' }),
  adTokenId: uuid.optional(),
  orderTokenId: uuid.optional(),
  status: z
    .enum(AD_STATUSES, { error: `must be one of ${AD_STATUSES.join(', ')}` })
    .optional()
    .openapi({ description: "PENDING (create not yet confirmed) lists the caller's own pending ads and needs a Bearer token." }),
});

/** An order hash: 0x and 64 hex digits, compared in lower case. */
const orderHashFilter = text('must be an order hash: 0x and 64 hex digits')
  .regex(/^0x[0-9a-fA-F]{64}$/, { error: 'must be an order hash: 0x and 64 hex digits' })
  .transform((value) => value.toLowerCase())
  .openapi({ pattern: '^0x[0-9a-fA-F]{64}$', description: "The trade's order hash (`orderHash` of the create response, the trade and /params)." });

/** A transaction hash of either chain kind: 64 hex digits, 0x optional (EVM spells it with 0x, Stellar without). */
const txHashFilter = text('must be a transaction hash: 64 hex digits, 0x optional')
  .regex(/^(0x)?[0-9a-fA-F]{64}$/, { error: 'must be a transaction hash: 64 hex digits, 0x optional' })
  .transform((value) => value.replace(/^0x/, '').toLowerCase())
  .openapi({
    pattern: '^(0x)?[0-9a-fA-F]{64}$',
    description: "Any of the trade's verified transactions (deposit, lock, unlocks, lock release), EVM or Stellar, 0x optional. " +
      'With a Bearer token, also the deposit of one of your own PENDING trades (you its Bridger) that nobody confirmed yet, ' +
      'once it is in a block of the order chain.',
  });

/**
 * Trade statuses, comma-separated (`PENDING,LOCKED`) or the parameter repeated: each one known, or
 * 422 naming `status` and what it did not know; duplicates count once.
 */
const tradeStatusFilter = z
  .preprocess((value, ctx) => {
    const names = (Array.isArray(value) ? value : [value]).flatMap((entry) => (typeof entry === 'string' ? entry.split(',') : [String(entry)]));
    const unknown = names.filter((name) => !(TRADE_STATUSES as readonly string[]).includes(name));
    if (unknown.length > 0) {
      const received = unknown.join(',');
      const shown = received.length > 64 ? `${received.slice(0, 64)}...` : received;
      ctx.addIssue({
        code: 'custom', input: value,
        message: `must be one or more of ${TRADE_STATUSES.join(', ')} (comma-separated or repeated), received '${shown}'`,
      });
      return z.NEVER;
    }
    return [...new Set(names)] as TradeStatus[];
  }, z.array(z.enum(TRADE_STATUSES)).min(1))
  .openapi({
    description: `Only trades in one of these statuses (${TRADE_STATUSES.join(', ')}): comma-separated, or the parameter repeated.`,
    example: ['PENDING', 'LOCKED'],
  });

export const tradesQuery = listQuery({
  routeId: uuid.optional(),
  adId: uuid.optional(),
  adCreatorAddress: walletFilter.optional(),
  bridgerAddress: walletFilter.optional(),
  adTokenId: uuid.optional(),
  orderTokenId: uuid.optional(),
  minAmount: amount.optional().openapi({ description: 'Only trades with amount >= this.' }),
  maxAmount: amount.optional().openapi({ description: 'Only trades with amount <= this.' }),
  orderHash: orderHashFilter.optional(),
  txHash: txHashFilter.optional(),
  status: tradeStatusFilter.optional(),
});

export const idParams = z.strictObject({ id: uuid });
export const chainIdParams = z.strictObject({ chainId });
