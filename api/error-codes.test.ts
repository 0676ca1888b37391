import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_CODE_LIST, isRetryable } from './error-codes.ts';
import { errorBody } from './errors.ts';

const ROOT = join(import.meta.dirname, '..');
const SKIP = new Set(['node_modules', '.git', 'target', '.tools', 'client', 'contracts', 'circuits', 'deploy']);

/**
 * Codes that never reach a body: a Node-style socket error code (webhooks' DNS guard), and the
 * keeper senders' own errors (a lost lease, a Stellar row they cannot read, an account not on chain yet: caught by their runner).
 */
const NOT_API_CODES = new Set(['EPRIVATE', 'KEEPER_LEASE_LOST', 'KEEPER_STELLAR_CALL_DATA', 'KEEPER_ACCOUNT_MISSING']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name) || name.startsWith('.')) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The codes the source gives an error: `readonly code = 'X'`, `code: 'X'`, `code: c ? 'X' : 'Y'`,
 * `code = options?.code ?? 'X'`: every SCREAMING_SNAKE literal on a line that assigns a `code`
 * (comparisons with `===` excluded: they read a code, they do not give one).
 */
function declaredCodes(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of sourceFiles(ROOT)) {
    if (file.endsWith(join('api', 'error-codes.ts'))) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!/readonly code\b|this\.code\s*=|[{,]\s*code:/.test(line) || /^\s*(\/\/|\*)/.test(line)) continue;
      // Only the value given to `code` (up to the next , ; } or ), not the rest of the line.
      for (const value of line.matchAll(/\bcode\s*(?:=(?!=)|:)\s*([^,;})]*)/g)) {
        for (const m of value[1]!.matchAll(/(===\s*)?'([A-Z][A-Z0-9_]{2,})'/g)) {
          if (!m[1] && !NOT_API_CODES.has(m[2]!)) found.set(m[2]!, relative(ROOT, file));
        }
      }
    }
  }
  return found;
}

describe('error codes', () => {
  it('every code an error is given in the source is in the registry', () => {
    const declared = declaredCodes();
    // Sanity: the scan finds the domain errors' codes and the specific ones passed at throw sites.
    for (const known of ['INSUFFICIENT_LIQUIDITY', 'AMOUNT_BELOW_MINIMUM', 'AMOUNT_ABOVE_MAXIMUM', 'TOKEN_EXPIRED', 'TRADE_NOT_FOUND', 'IDEMPOTENCY_KEY_REUSED', 'DATABASE_UNAVAILABLE']) {
      expect(declared.has(known), known).toBe(true);
    }
    const missing = [...declared].filter(([code]) => !Object.hasOwn(ERROR_CODES, code)).map(([code, file]) => `${code} (${file})`);
    expect(missing).toEqual([]);
  });

  // client/openapi.json is the generated document (client/client.test.ts holds it equal to the service's).
  it('the OpenAPI Error schema enumerates exactly the registry', () => {
    const doc = JSON.parse(readFileSync(join(ROOT, 'client', 'openapi.json'), 'utf8')) as { components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }>; required?: string[] }> } };
    const schema = doc.components.schemas['Error']!;
    expect(schema.properties['code']!.enum).toEqual(ERROR_CODE_LIST);
    expect(schema.required).toContain('code');
  });

  it('docs/api.md has one row per registered code, and no row for any other', () => {
    const readme = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
    const rows = [...readme.matchAll(/^\s*\| `([A-Z][A-Z0-9_]+)` \| (\d{3}) \| (yes|no) \| (.+) \|$/gm)]
      .map((m) => ({ code: m[1]! as keyof typeof ERROR_CODES, status: Number(m[2]), retryable: m[3] === 'yes' }));
    expect(rows.map((r) => r.code).sort()).toEqual([...ERROR_CODE_LIST].sort());
    for (const row of rows) {
      expect(row.status, row.code).toBe(ERROR_CODES[row.code].status);
      expect(row.retryable, row.code).toBe(isRetryable(row.code));
    }
  });

  it('every error body says whether the same request may succeed later', () => {
    expect(errorBody(503, 'down', 'RPC_UNAVAILABLE')).toMatchObject({ code: 'RPC_UNAVAILABLE', retryable: true });
    expect(errorBody(429, 'slow down')).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    expect(errorBody(409, 'wait', 'NOT_FINAL')).toMatchObject({ retryable: true });
    expect(errorBody(409, 'no', 'INSUFFICIENT_LIQUIDITY')).toMatchObject({ retryable: false });
    expect(errorBody(422, ['amount must be ...'])).toMatchObject({ code: 'VALIDATION_FAILED', retryable: false });
  });

  it('codes are SCREAMING_SNAKE and statuses are error statuses', () => {
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(status).toBeGreaterThanOrEqual(400);
    }
  });
});
