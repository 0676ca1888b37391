import { execFileSync } from 'node:child_process';
import { chownSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EmbeddedDatabase } from '../../db/embedded.ts';
import { createKnex } from '../../db/knex.ts';

/**
 * An online base backup of `cluster` into `target`: pg_backup_start, a copy of the data directory
 * while the service writes, pg_backup_stop, its backup_label written into the copy, and the WAL
 * from the start to the stop copied last (no WAL archive here; production archives it, README).
 * PostgreSQL started on a copy of `target` replays that WAL: the restore drills' backup point.
 */
export async function baseBackup(cluster: EmbeddedDatabase, target: string): Promise<void> {
  // A backup is the cluster's administration: its superuser, not the service's role.
  const admin = createKnex(cluster.adminUrl, 1);
  try {
    // One session for start and stop: a non-exclusive backup belongs to the session that started it.
    await admin.transaction(async (session) => {
      await session.raw(`SELECT pg_backup_start('restore drill', true)`);
      execFileSync('cp', ['-a', cluster.dataDir, target]);
      const stop = await session.raw(`SELECT labelfile, spcmapfile FROM pg_backup_stop(false)`);
      // Owned like the rest of the cluster (the postgres user when the tests run as root).
      const owner = statSync(cluster.dataDir);
      const write = (name: string, text: string) => {
        writeFileSync(path.join(target, name), text, { mode: 0o600 });
        chownSync(path.join(target, name), owner.uid, owner.gid);
      };
      write('backup_label', stop.rows[0].labelfile);
      if (stop.rows[0].spcmapfile) write('tablespace_map', stop.rows[0].spcmapfile);
    });
    rmSync(path.join(target, 'pg_wal'), { recursive: true, force: true });
    execFileSync('cp', ['-a', path.join(cluster.dataDir, 'pg_wal'), path.join(target, 'pg_wal')]);
    rmSync(path.join(target, 'postmaster.pid'), { force: true });
    rmSync(path.join(target, 'postmaster.opts'), { force: true });
  } finally {
    await admin.destroy();
  }
}

/** The `relayer` database's URL on `cluster` (as the service's role). */
export const relayerDatabaseOf = (cluster: EmbeddedDatabase): string => {
  const url = new URL(cluster.url);
  url.pathname = '/relayer';
  return url.toString();
};
