import { Address, Asset, Keypair, rpc, StrKey, xdr } from '@stellar/stellar-sdk';
import { RpcUnavailableError } from '../errors.ts';
import { stellarView } from './views.ts';

/**
 * Whether a Stellar account can be paid a token at all. A Soroban token contract of its own (SEP-41
 * wasm) keeps balances in its storage and pays any address; the Stellar Asset Contract (SAC) keeps
 * them in the classic ledger: native XLM lands in the account entry, so the account must exist; a
 * classic asset lands in a trustline, which the account must have opened (authorised, with room
 * under its limit). A payment the ledger cannot take fails in the transaction, so an order whose
 * recipient cannot receive would lock the Maker's funds and never unlock: trade create asks first.
 */

/** What kind of token a Soroban contract is, as far as paying it out goes. */
export type StellarTokenKind =
  | { kind: 'native' }
  | { kind: 'classic'; code: string; issuer: string }
  | { kind: 'contract' };

/** Trustline flag: the issuer authorised the account to hold the asset (AUTHORIZED_FLAG). */
const AUTHORIZED_FLAG = 1;

function readFailure(what: string, error: unknown): RpcUnavailableError {
  if (error instanceof RpcUnavailableError) return error;
  return new RpcUnavailableError(`Soroban RPC could not read ${what}: ${(error as Error).message}`, { cause: error });
}

async function ledgerEntry(server: rpc.Server, key: xdr.LedgerKey, what: string): Promise<xdr.LedgerEntryData | null> {
  try {
    const { entries } = await server.getLedgerEntries(key);
    return entries[0]?.val ?? null;
  } catch (error) {
    throw readFailure(what, error);
  }
}

/**
 * The kind of `token`: a SAC (by its instance's executable) of native XLM or of a classic asset
 * (by its `name` view, "native" or "CODE:ISSUER"), else a contract of its own. Throws
 * `RpcUnavailableError` when the chain cannot tell.
 */
export async function readStellarTokenKind(server: rpc.Server, token: string): Promise<StellarTokenKind> {
  const key = xdr.LedgerKey.contractData(new xdr.LedgerKeyContractData({
    contract: new Address(token).toScAddress(),
    key: xdr.ScVal.scvLedgerKeyContractInstance(),
    durability: xdr.ContractDataDurability.persistent(),
  }));
  const instance = await ledgerEntry(server, key, `the instance of ${token}`);
  if (!instance) throw new RpcUnavailableError(`Soroban RPC knows no contract ${token}`);
  const executable = instance.contractData().val().instance().executable();
  if (executable.switch() !== xdr.ContractExecutableType.contractExecutableStellarAsset()) return { kind: 'contract' };
  const { value } = await stellarView(server, token, 'name');
  const name = String(value);
  if (name === 'native') return { kind: 'native' };
  const [code, issuer] = name.split(':');
  if (!code || !issuer || !StrKey.isValidEd25519PublicKey(issuer)) {
    throw new RpcUnavailableError(`the Stellar Asset Contract ${token} names its asset '${name}'`);
  }
  return { kind: 'classic', code, issuer };
}

/**
 * Why `recipient` cannot be paid `amount` of `token` on this chain, or null when it can: a G-account
 * that does not exist (native XLM), or that has no trustline to the classic asset, an unauthorised
 * one, or one whose limit leaves less room than `amount`. A contract (C...) recipient, the asset's
 * issuer and any token that is not a SAC are always payable. `kinds` caches token kinds (a contract's
 * executable does not change). Throws `RpcUnavailableError` when the chain cannot tell.
 */
export async function stellarRecipientProblem(
  server: rpc.Server,
  token: string,
  recipient: string,
  amount: bigint,
  kinds: Map<string, StellarTokenKind> = new Map(),
): Promise<string | null> {
  if (!StrKey.isValidEd25519PublicKey(recipient)) return null;
  let tokenKind = kinds.get(token);
  if (!tokenKind) {
    tokenKind = await readStellarTokenKind(server, token);
    kinds.set(token, tokenKind);
  }
  if (tokenKind.kind === 'contract') return null;
  const accountId = Keypair.fromPublicKey(recipient).xdrAccountId();
  if (tokenKind.kind === 'native') {
    const account = await ledgerEntry(server, xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId })), `account ${recipient}`);
    if (account) return null;
    return `${recipient} is no account on this network: XLM can only be paid to an existing account (create it with the base reserve first)`;
  }
  const { code, issuer } = tokenKind;
  if (recipient === issuer) return null;
  const asset = new Asset(code, issuer);
  const entry = await ledgerEntry(
    server,
    xdr.LedgerKey.trustline(new xdr.LedgerKeyTrustLine({ accountId, asset: asset.toTrustLineXDRObject() })),
    `the trustline of ${recipient} to ${code}`,
  );
  if (!entry) return `${recipient} has no trustline to ${code}:${issuer}: it cannot be paid the token (${token}) until it adds one`;
  const trustline = entry.trustLine();
  if ((trustline.flags() & AUTHORIZED_FLAG) === 0) {
    return `${recipient}'s trustline to ${code}:${issuer} is not authorised by the issuer: it cannot be paid the ` +
      `token (${token})`;
  }
  const room = BigInt(trustline.limit().toString()) - BigInt(trustline.balance().toString());
  if (room < amount) {
    return `${recipient}'s trustline to ${code}:${issuer} has room for ${room} more, less than the ${amount} it ` +
      `would be paid: raise its limit`;
  }
  return null;
}
