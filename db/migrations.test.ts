import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';

describe('migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it('roll all the way down and back up', async () => {
    await db.knex.migrate.rollback(undefined, true);
    expect(await db.knex.schema.hasTable('chains')).toBe(false);
    expect(await db.knex.schema.hasTable('ads')).toBe(false);
    await db.knex.migrate.latest();
    for (const table of ['chains', 'tokens', 'routes', 'ads', 'trades']) {
      expect(await db.knex.schema.hasTable(table)).toBe(true);
    }
  });

  it('keep amounts as exact decimal strings beyond 2^53', async () => {
    const [chain] = await db.knex('chains').insert({ name: 'a', chain_id: '1', kind: 'EVM', ad_manager_address: '0x', order_portal_address: '0x' }).returning('id');
    const row = await db.knex.raw(`SELECT '115792089237316195423570985008687907853269984665640564039457584007913129639935'::numeric(78,0) AS v`);
    expect(row.rows[0].v).toBe('115792089237316195423570985008687907853269984665640564039457584007913129639935');
    expect(chain.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
