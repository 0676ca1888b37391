import { randomBytes } from 'node:crypto';
import { type ChainKind } from '../domain/index.ts';
import { CallTargetError } from './adapter.ts';
import { adapterOf } from './adapters.ts';
import { ACTIONS, RequestFieldError, structFields, type ActionFields, type ActionName } from './request-schema.ts';
import type { RelayerSigners } from './signers.ts';
import type { SignedCallData } from './signed-call-shape.ts';

/** The contract a request is for. */
export interface CallTarget {
  kind: ChainKind;
  /** Registry chain id (numeric string). */
  chainId: string;
  /** AdManager or OrderPortal on that chain. */
  contractAddress: string;
  /** Stellar only: the network passphrase of the chain. */
  networkPassphrase?: string;
}

export type { SignedCallData };

/** The action's own fields as returned: integers as decimal strings, everything else as given. */
export type ReturnedFields<A extends ActionName> = { [K in keyof ActionFields<A>]: string };

export interface BuildSignedCallDataInput<A extends ActionName> {
  target: CallTarget;
  action: A;
  fields: ActionFields<A>;
  signers: RelayerSigners;
  /** How long the request stays valid (config SIGNED_REQUEST_TTL_SECONDS). */
  ttlSeconds: number;
  /** Current time in milliseconds; `Date.now()` by default (tests pin it). */
  now?: number;
  /** The request's authToken (0x + 64 hex); 32 fresh random bytes by default (test vectors pin it). */
  authToken?: string;
}

export { CallTargetError };

/**
 * Signs one contract action for one chain and returns the shared signed call data plus the
 * action's fields. A fresh random authToken is drawn per call unless one is given. EVM: EIP-712 under
 * `{name, version, chainId, verifyingContract}`. Stellar: ed25519 over the hash of the byte
 * layout in chains/stellar/request-layout.ts. Throws `RequestFieldError` on a bad field value and
 * `CallTargetError` on a bad target (as a rejected promise). The signature comes from
 * `signers.signer`: in memory or from a hardware token (chains/signers.ts).
 */
export async function buildSignedCallData<A extends ActionName>(
  input: BuildSignedCallDataInput<A>,
): Promise<SignedCallData & ReturnedFields<A>> {
  const { target, action, signers } = input;
  if (!Number.isInteger(input.ttlSeconds) || input.ttlSeconds <= 0) {
    throw new RangeError(`ttlSeconds must be a positive integer, received ${input.ttlSeconds}`);
  }
  if (!/^\d+$/.test(target.chainId)) throw new CallTargetError(`chainId must be a numeric string, received '${target.chainId}'`);
  const nowMs = input.now ?? Date.now();
  const nowSeconds = Math.floor(nowMs / 1000);
  // A rotating signer picks the key of this request's moment once, for the signature and the key shown.
  const signer = signers.signer.at?.(nowMs) ?? signers.signer;
  const deadline = String(nowSeconds + input.ttlSeconds);
  if (input.authToken !== undefined && !/^0x[0-9a-f]{64}$/.test(input.authToken)) {
    throw new RangeError(`authToken must be 0x and 64 lower-case hex digits, received '${input.authToken}'`);
  }
  const authToken = input.authToken ?? `0x${randomBytes(32).toString('hex')}`;
  const returned = actionFieldsOnly(action, input.fields);
  // The header is the service's alone (or the explicit input's): set last, so no field can replace it.
  const values: Record<string, unknown> = { ...returned, authToken, deadline };
  const { primaryType } = ACTIONS[action];
  const fields = structFields(action);

  const common = { chainId: target.chainId, authToken, timeToExpire: input.ttlSeconds, chainKind: target.kind, deadline };
  const signed = await adapterOf(target.kind).signRequest({
    target, primaryType, fields, values, returned: returned as Record<string, string>, signer, domain: signers.domain,
  });
  return { ...returned, ...common, contractAddress: target.contractAddress, ...signed };
}

/** Header fields only the service sets (chains/request-schema.ts REQUEST_HEADER). */
const SERVICE_ONLY = new Set(['authToken', 'deadline']);

/**
 * The caller's values for the action's own fields, integers as decimal strings. `authToken` and
 * `deadline` given among the fields (a request body passed through, say) are dropped: the service
 * draws and sets them, and the caller's never reach the signature or the response. Any other key
 * the action does not declare is a `RequestFieldError`, as before.
 */
function actionFieldsOnly<A extends ActionName>(action: A, fields: ActionFields<A>): ReturnedFields<A> {
  const declared = new Set<string>(ACTIONS[action].fields.map((field) => field.name));
  const unknown = Object.keys(fields).filter((name) => !declared.has(name) && !SERVICE_ONLY.has(name));
  if (unknown.length > 0) throw new RequestFieldError(`unknown fields: ${unknown.join(', ')}`);
  return Object.fromEntries(
    Object.entries(fields as Record<string, string | bigint>)
      .filter(([name]) => declared.has(name))
      .map(([name, value]) => [name, typeof value === 'bigint' ? value.toString() : value]),
  ) as ReturnedFields<A>;
}
