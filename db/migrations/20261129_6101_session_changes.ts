import type { Knex } from 'knex';

/**
 * Every change that can end a session or change who it speaks for NOTIFYs `session_changes` with the
 * session's id, in the transaction that makes it: a session updated (revoked) or deleted (purged, or
 * its user deleted), and a wallet added, moved or removed (every session of that user: a session's
 * principal carries its user's wallets). Triggers rather than calls in the code, so nothing can end a
 * session unannounced: not a new code path, not an operator's hand-written SQL, not a cascade. The api
 * processes keep a cache of live sessions that trusts an entry only until such a notice (auth/session-cache.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION notify_session_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('session_changes', OLD.id::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER sessions_notify_change AFTER UPDATE OR DELETE ON sessions
      FOR EACH ROW EXECUTE FUNCTION notify_session_change()`);
  await knex.raw(`
    CREATE FUNCTION notify_wallet_sessions_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('session_changes', s.id::text) FROM sessions s WHERE s.user_id = OLD.user_id;
      END IF;
      IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('session_changes', s.id::text) FROM sessions s WHERE s.user_id = NEW.user_id;
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER wallets_notify_sessions_change AFTER INSERT OR UPDATE OR DELETE ON wallets
      FOR EACH ROW EXECUTE FUNCTION notify_wallet_sessions_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS wallets_notify_sessions_change ON wallets');
  await knex.raw('DROP FUNCTION IF EXISTS notify_wallet_sessions_change()');
  await knex.raw('DROP TRIGGER IF EXISTS sessions_notify_change ON sessions');
  await knex.raw('DROP FUNCTION IF EXISTS notify_session_change()');
}
