import type { Knex } from 'knex';
import type { ChainKind } from '../../domain/index.ts';

/** A wallet a user signed in with (or linked), in its canonical spelling. */
export interface WalletRecord {
  address: string;
  chainKind: ChainKind;
  createdAt: Date;
}

/** A user: an id and its wallets (at most one per chain kind), oldest first. */
export interface UserRecord {
  id: string;
  createdAt: Date;
  wallets: WalletRecord[];
}

interface WalletRow {
  user_id: string;
  address: string;
  chain_kind: ChainKind;
  created_at: Date;
}

/** Raised when a wallet insert hits a uniqueness rule; `rule` says which one. */
export class WalletUniquenessError extends Error {
  constructor(readonly rule: 'address' | 'chain_kind') {
    super(rule === 'address' ? 'the address already belongs to a user' : 'the user already has a wallet of this chain kind');
  }
}

const toWallet = (row: WalletRow): WalletRecord => ({ address: row.address, chainKind: row.chain_kind, createdAt: row.created_at });

/** The user with its wallets, or null. */
export async function findUserById(db: Knex | Knex.Transaction, id: string): Promise<UserRecord | null> {
  const user = await db('users').where({ id }).first<{ id: string; created_at: Date } | undefined>('id', 'created_at');
  if (!user) return null;
  const wallets = await db('wallets').where({ user_id: id }).orderBy([{ column: 'created_at' }, { column: 'chain_kind' }])
    .select<WalletRow[]>('user_id', 'address', 'chain_kind', 'created_at');
  return { id: user.id, createdAt: user.created_at, wallets: wallets.map(toWallet) };
}

/** The id of the user owning `address` (canonical spelling), or null. */
export async function findUserIdByAddress(db: Knex | Knex.Transaction, address: string): Promise<string | null> {
  const row = await db('wallets').where({ address }).first<{ user_id: string } | undefined>('user_id');
  return row?.user_id ?? null;
}

/**
 * The user owning the wallet, created with that wallet when the address is new. Safe under
 * concurrent first sign-ins of one address: the loser of the insert race reads the winner's user.
 */
export async function findOrCreateUserByWallet(trx: Knex.Transaction, chainKind: ChainKind, address: string): Promise<string> {
  const existing = await findUserIdByAddress(trx, address);
  if (existing) return existing;
  const [user] = await trx('users').insert({}).returning<{ id: string }[]>('id');
  const inserted = await trx.raw<{ rows: { user_id: string }[] }>(
    `INSERT INTO wallets (user_id, chain_kind, address) VALUES (?, ?, ?)
     ON CONFLICT (address) DO NOTHING RETURNING user_id`,
    [user!.id, chainKind, address],
  );
  if (inserted.rows.length > 0) return user!.id;
  // Another sign-in of this address committed first: drop the empty user, use theirs.
  await trx('users').where({ id: user!.id }).delete();
  const winner = await findUserIdByAddress(trx, address);
  if (!winner) throw new Error(`wallet ${address} vanished during sign-in`);
  return winner;
}

/** Adds a wallet to a user; throws `WalletUniquenessError` when the address or the user's chain kind is taken. */
export async function addWallet(trx: Knex.Transaction, userId: string, chainKind: ChainKind, address: string): Promise<void> {
  try {
    // A savepoint, so a uniqueness failure leaves the caller's transaction usable.
    await trx.transaction(async (inner) => {
      await inner('wallets').insert({ user_id: userId, chain_kind: chainKind, address });
    });
  } catch (error) {
    const constraint = (error as { constraint?: string }).constraint;
    if (constraint === 'wallets_address_unique') throw new WalletUniquenessError('address');
    if (constraint === 'wallets_user_chain_kind_unique') throw new WalletUniquenessError('chain_kind');
    throw error;
  }
}
