import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AD_STATUSES, TRADE_STATUSES } from '../domain/statuses.ts';
import { AD_LABELS, adLabel, LABELS, TRADE_LABELS, tradeLabel } from './src/labels.ts';

/**
 * The management view's labels (spec: Active, Matched, Locked, Settled, Closed) are written once, in
 * app/src/labels.ts: every ad and trade state the service has, and every one its API documents, maps
 * to exactly one of the five; app/README.md's table says the same.
 */
describe('the five labels of the management view', () => {
  const openapi = JSON.parse(readFileSync(new URL('../client/openapi.json', import.meta.url), 'utf8'));
  const documented = (schema: 'Ad' | 'Trade'): string[] => openapi.components.schemas[schema].properties.status.enum;

  it('maps every ad state (the service\'s and the API\'s) to exactly one of the five labels', () => {
    expect(new Set([...AD_STATUSES, ...documented('Ad')])).toEqual(new Set(Object.keys(AD_LABELS)));
    for (const status of Object.keys(AD_LABELS)) {
      expect(LABELS.filter((label) => label === adLabel(status)), status).toHaveLength(1);
    }
  });

  it('maps every trade state (the service\'s and the API\'s) to exactly one of the five labels', () => {
    expect(new Set([...TRADE_STATUSES, ...documented('Trade')])).toEqual(new Set(Object.keys(TRADE_LABELS)));
    for (const status of Object.keys(TRADE_LABELS)) {
      expect(LABELS.filter((label) => label === tradeLabel(status)), status).toHaveLength(1);
    }
  });

  it('uses each of the five labels, and reads an unknown state as Closed (never as Active)', () => {
    expect(new Set([...Object.values(AD_LABELS), ...Object.values(TRADE_LABELS)])).toEqual(new Set(LABELS));
    expect(adLabel('SOMETHING_NEW')).toBe('Closed');
    expect(tradeLabel('SOMETHING_NEW')).toBe('Closed');
  });

  it('is the table app/README.md shows', () => {
    const readme = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
    const rows = [...readme.matchAll(/^\| (ad|trade) \| `([A-Z_]+)` \| (\w+) \|/gm)].map(([, kind, status, label]) => [kind, status, label]);
    expect(rows).toEqual([
      ...Object.entries(AD_LABELS).map(([status, label]) => ['ad', status, label]),
      ...Object.entries(TRADE_LABELS).map(([status, label]) => ['trade', status, label]),
    ]);
  });
});
