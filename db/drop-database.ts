import type { Knex } from 'knex';

const INSUFFICIENT_PRIVILEGE = '42501';
const OBJECT_IN_USE = '55006';

/**
 * Drops a scratch database, ending its sessions. `WITH (FORCE)` as a role that is no superuser is
 * refused while an autovacuum worker (which belongs to no role it may signal) works in the database;
 * a plain DROP ends such workers itself but is refused while a session is still connected. So the
 * two are tried in turn until one succeeds or `timeoutMs` passes: each refusal is momentary.
 */
export async function dropDatabase(admin: Knex, name: string, timeoutMs = 20_000): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`dropDatabase: "${name}" is not a plain database name`);
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.raw(`DROP DATABASE IF EXISTS ${name}${attempt % 2 === 0 ? ' WITH (FORCE)' : ''}`);
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if ((code !== INSUFFICIENT_PRIVILEGE && code !== OBJECT_IN_USE) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 + 100 * Math.min(attempt, 5)));
    }
  }
}
