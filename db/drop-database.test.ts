import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { describe, expect, inject, it } from 'vitest';
import { dropDatabase } from './drop-database.ts';
import { createKnex } from './knex.ts';

const superuserUrl = inject('postgresSuperuserUrl');

/**
 * A new database, as the service role, with a session of the cluster's superuser in it: one the
 * service role may not end, as an autovacuum worker is not.
 */
async function databaseWithSessionItMayNotEnd(): Promise<{ admin: Knex; superuser: Knex; name: string }> {
  const admin = createKnex(inject('postgresAdminUrl'), 1);
  const name = `drop_${randomBytes(4).toString('hex')}`;
  await admin.raw(`CREATE DATABASE ${name}`);
  const inside = new URL(superuserUrl);
  inside.pathname = `/${name}`;
  const superuser = createKnex(inside.toString(), 1);
  await superuser.raw('SELECT 1');
  return { admin, superuser, name };
}

describe.skipIf(!superuserUrl)('dropping a scratch database as the service role', () => {
  it('waits out a session it may not end (as autovacuum is) and drops the database once it is gone', async () => {
    const { admin, superuser, name } = await databaseWithSessionItMayNotEnd();
    try {
      await expect(admin.raw(`DROP DATABASE ${name} WITH (FORCE)`)).rejects.toMatchObject({ code: '42501' });
      const dropped = dropDatabase(admin, name);
      setTimeout(() => void superuser.destroy(), 500);
      await dropped;
      const left = await admin.raw('SELECT count(*)::int AS n FROM pg_database WHERE datname = ?', [name]);
      expect(left.rows[0].n).toBe(0);
    } finally {
      await superuser.destroy();
      await admin.destroy();
    }
  });

  it('gives up with the refusal once its time is over', async () => {
    const { admin, superuser, name } = await databaseWithSessionItMayNotEnd();
    try {
      await expect(dropDatabase(admin, name, 300)).rejects.toMatchObject({ code: expect.stringMatching(/^(42501|55006)$/) });
    } finally {
      await superuser.destroy();
      await dropDatabase(admin, name);
      await admin.destroy();
    }
  });
});
