import { DomainError } from '../../domain/index.ts';

/** An account's signers and thresholds as Horizon's `/accounts/:id` reports them. */
export interface StellarAccountSigners {
  accountId: string;
  signers: { key: string; weight: number; type: string }[];
  thresholds: { low: number; medium: number; high: number };
}

/** Reads an account's signers from Horizon; null when the account does not exist (404). */
export type StellarAccountReader = (accountId: string) => Promise<StellarAccountSigners | null>;

/** Horizon did not answer, or answered something that is not an account record: nothing can be decided. */
export class HorizonUnavailableError extends DomainError {
  readonly code = 'HORIZON_UNAVAILABLE';
  readonly kind = 'unavailable';
  override readonly retryable = true;
}

const isWeight = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 255;

/** Checks the fields of a Horizon account record this service relies on. */
function readAccountRecord(accountId: string, body: unknown): StellarAccountSigners | null {
  const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const thresholds = (typeof record.thresholds === 'object' && record.thresholds !== null ? record.thresholds : {}) as Record<string, unknown>;
  if (record.id !== accountId && record.account_id !== accountId) return null;
  if (!Array.isArray(record.signers) || !isWeight(thresholds.low_threshold) || !isWeight(thresholds.med_threshold) || !isWeight(thresholds.high_threshold)) {
    return null;
  }
  const signers = [];
  for (const signer of record.signers as unknown[]) {
    const s = (typeof signer === 'object' && signer !== null ? signer : {}) as Record<string, unknown>;
    if (typeof s.key !== 'string' || typeof s.type !== 'string' || !isWeight(s.weight)) return null;
    signers.push({ key: s.key, weight: s.weight, type: s.type });
  }
  return {
    accountId,
    signers,
    thresholds: { low: thresholds.low_threshold as number, medium: thresholds.med_threshold as number, high: thresholds.high_threshold as number },
  };
}

/**
 * Reads accounts from the Horizon at `baseUrl` (GET `/accounts/:id`): the record's signers and
 * thresholds, null on 404. Anything else (timeout, 5xx, a record of another shape) throws
 * `HorizonUnavailableError`: a caller must not guess who may sign for an account.
 */
export function createHorizonAccountReader(baseUrl: string, options: { timeoutMs?: number } = {}): StellarAccountReader {
  const base = baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 5_000;
  return async (accountId) => {
    let response: Response;
    try {
      response = await fetch(`${base}/accounts/${encodeURIComponent(accountId)}`, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new HorizonUnavailableError(`Horizon did not answer for account ${accountId}`, { cause: error });
    }
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new HorizonUnavailableError(`Horizon answered ${response.status} for account ${accountId}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw new HorizonUnavailableError(`Horizon answered non-JSON for account ${accountId}`, { cause: error });
    }
    const record = readAccountRecord(accountId, body);
    if (!record) throw new HorizonUnavailableError(`Horizon's record of account ${accountId} is not an account record`);
    return record;
  };
}
