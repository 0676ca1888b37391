import { RequestFieldError, parseUint } from '../request-schema.ts';

/** Largest amount a Soroban token (i128) can hold. */
export const MAX_I128 = (1n << 127n) - 1n;

/** Throws `RequestFieldError` naming the field unless `value` is an integer in [0, 2^127). */
export function assertI128Amount(name: string, value: string | bigint): void {
  let parsed: bigint;
  try {
    parsed = parseUint(value);
  } catch (error) {
    throw new RequestFieldError(`${name}: ${(error as Error).message} (received '${String(value)}')`);
  }
  if (parsed > MAX_I128) throw new RequestFieldError(`${name}: must fit a Stellar i128 amount, below 2^127 (received '${String(value)}')`);
}
