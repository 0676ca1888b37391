import { addressToBytes32, uuidToBytes32 } from './address.ts';

/**
 * The structs the relayer signs, one per contract action, shared by both chain kinds: EIP-712 on
 * EVM (chains/evm/typed-data.ts) and the Stellar byte layout (chains/stellar/request-layout.ts)
 * are two encodings of exactly these fields, in this order. chains/README.md documents both.
 * Changing a field here changes the contracts (contracts/evm/src).
 */

/** How a field's value is given by callers and turned into one 32-byte word. */
export type FieldKind =
  /** An address of either chain kind, 32 bytes as `addressToBytes32` makes it. */
  | 'address'
  /** A UUID (the ad id), left-padded to 32 bytes. */
  | 'uuid'
  /** Already a 32-byte value, 0x-prefixed hex (authToken, order hash). */
  | 'bytes32'
  /** An unsigned integer below 2^256, given as a decimal string or bigint (amounts, chain ids, field elements). */
  | 'uint';

export interface FieldSpec {
  name: string;
  kind: FieldKind;
}

/** The Solidity/EIP-712 type of a field kind: every value is one 32-byte word. */
export function solidityTypeOf(kind: FieldKind): 'bytes32' | 'uint256' {
  return kind === 'uint' ? 'uint256' : 'bytes32';
}

/** Fields every request starts with: the single-use token and the unix-seconds deadline. */
const REQUEST_HEADER: FieldSpec[] = [
  { name: 'authToken', kind: 'bytes32' },
  { name: 'deadline', kind: 'uint' },
];

const f = (name: string, kind: FieldKind): FieldSpec => ({ name, kind });

/** Parameters of each action, after the header. */
export const ACTIONS = {
  createAd: {
    primaryType: 'CreateAd',
    contract: 'adManager',
    fields: [
      f('adId', 'uuid'),
      f('adCreator', 'address'),
      f('adToken', 'address'),
      f('initialAmount', 'uint'),
      f('orderChainId', 'uint'),
      f('adRecipient', 'address'),
    ],
  },
  fundAd: { primaryType: 'FundAd', contract: 'adManager', fields: [f('adId', 'uuid'), f('amount', 'uint')] },
  withdrawFromAd: {
    primaryType: 'WithdrawFromAd',
    contract: 'adManager',
    fields: [f('adId', 'uuid'), f('amount', 'uint'), f('to', 'address')],
  },
  closeAd: { primaryType: 'CloseAd', contract: 'adManager', fields: [f('adId', 'uuid'), f('to', 'address')] },
  createOrder: {
    primaryType: 'CreateOrder',
    contract: 'orderPortal',
    fields: [f('orderHash', 'bytes32'), f('secretCommitment', 'uint')],
  },
  lockForOrder: { primaryType: 'LockForOrder', contract: 'adManager', fields: [f('orderHash', 'bytes32')] },
  unlock: {
    primaryType: 'Unlock',
    contract: 'adManagerOrOrderPortal',
    fields: [f('orderHash', 'bytes32'), f('nullifierHash', 'uint'), f('targetRoot', 'uint')],
  },
} as const satisfies Record<string, { primaryType: string; contract: string; fields: FieldSpec[] }>;

export type ActionName = keyof typeof ACTIONS;
export const ACTION_NAMES = Object.keys(ACTIONS) as ActionName[];

/** Values a caller gives for an action's fields: strings (or bigints for integers), by field name. */
export type ActionFields<A extends ActionName> = {
  [K in (typeof ACTIONS)[A]['fields'][number]['name']]: string | bigint;
};

/** All fields of an action's struct, header first, in signing order. */
export function structFields(action: ActionName): FieldSpec[] {
  return [...REQUEST_HEADER, ...ACTIONS[action].fields];
}

/** The EIP-712 type string, e.g. `FundAd(bytes32 authToken,uint256 deadline,bytes32 adId,uint256 amount)`. */
export function typeString(primaryType: string, fields: FieldSpec[]): string {
  return `${primaryType}(${fields.map((field) => `${solidityTypeOf(field.kind)} ${field.name}`).join(',')})`;
}

/** Raised when a field's value does not fit its kind; names the field and the received value. */
export class RequestFieldError extends Error {}

const MAX_UINT256 = (1n << 256n) - 1n;

/**
 * One field's value as a 32-byte word (0x-prefixed lower-case hex). Throws `RequestFieldError`
 * naming the field when the value does not fit its kind.
 */
export function encodeField(field: FieldSpec, value: unknown): string {
  try {
    switch (field.kind) {
      case 'address':
        return addressToBytes32(String(value));
      case 'uuid':
        return uuidToBytes32(String(value));
      case 'bytes32':
        if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value)) throw new Error('expected 0x and 64 hex digits');
        return value.toLowerCase();
      case 'uint':
        return `0x${parseUint(value).toString(16).padStart(64, '0')}`;
    }
  } catch (error) {
    throw new RequestFieldError(`${field.name}: ${(error as Error).message} (received '${String(value)}')`);
  }
}

/** A non-negative integer below 2^256 from a bigint or a decimal string (no sign, no exponent). */
export function parseUint(value: unknown): bigint {
  let parsed: bigint;
  if (typeof value === 'bigint') parsed = value;
  else if (typeof value === 'string' && /^\d{1,78}$/.test(value)) parsed = BigInt(value);
  else throw new Error('expected a non-negative integer as a decimal string');
  if (parsed < 0n || parsed > MAX_UINT256) throw new Error('expected an integer in [0, 2^256)');
  return parsed;
}

/**
 * Every field of a struct as 32-byte words in signing order. Missing or unknown fields throw
 * `RequestFieldError`: a request must say exactly what it authorizes.
 */
export function encodeStruct(fields: FieldSpec[], values: Record<string, unknown>): string[] {
  const known = new Set(fields.map((field) => field.name));
  const unknown = Object.keys(values).filter((name) => !known.has(name));
  if (unknown.length > 0) throw new RequestFieldError(`unknown fields: ${unknown.join(', ')}`);
  return fields.map((field) => {
    if (values[field.name] === undefined) throw new RequestFieldError(`${field.name}: missing`);
    return encodeField(field, values[field.name]);
  });
}
