import pg from 'pg';
import { clusterUrl, FORMER_PASSWORD, FORMER_SUPERUSER, type EmbeddedCredentials } from './embedded-credentials.ts';

/**
 * Makes the running cluster on `port` match `credentials`, idempotently, on every start: the
 * service's role exists with its password, is no superuser (nor may create roles, replicate or
 * bypass row security; it may create databases, which the tests' per-file databases need), is a
 * member of none of the roles that read the server's files, and owns the `postgres` database and
 * every object in it the superuser owned (so migrations can alter them); the superuser's password
 * is the file's. A cluster made before the credentials file still has the former fixed password:
 * when the file's is refused, that one is tried (only for the former superuser), and replaced here.
 */
export async function secureEmbeddedCluster(port: number, credentials: EmbeddedCredentials): Promise<void> {
  const client = await connectAsSuperuser(port, credentials);
  try {
    const role = client.escapeIdentifier(credentials.role);
    const superuser = client.escapeIdentifier(credentials.superuser);
    await client.query('BEGIN');
    if ((await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [credentials.role])).rowCount === 0) await client.query(`CREATE ROLE ${role}`);
    // ALTER ROLE takes no parameters; the passwords are hex (readCredentials checks), so the literals are safe.
    await client.query(`ALTER ROLE ${role} WITH LOGIN NOSUPERUSER NOCREATEROLE CREATEDB NOREPLICATION NOBYPASSRLS ` +
      `PASSWORD ${client.escapeLiteral(credentials.password)}`);
    const granted = await client.query<{ rolname: string }>(
      `SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid
        WHERE m.member = (SELECT oid FROM pg_roles WHERE rolname = $1)`, [credentials.role]);
    // No membership at all: pg_read_server_files (pg_read_binary_file('/proc/...')) and the like included.
    for (const { rolname } of granted.rows) await client.query(`REVOKE ${client.escapeIdentifier(rolname)} FROM ${role}`);
    await client.query(`ALTER DATABASE postgres OWNER TO ${role}`);
    await client.query(REASSIGN_TO_SERVICE_ROLE.replaceAll(':role', client.escapeLiteral(credentials.role)));
    await client.query(`ALTER ROLE ${superuser} WITH PASSWORD ${client.escapeLiteral(credentials.superuserPassword)}`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
}

async function connectAsSuperuser(port: number, credentials: EmbeddedCredentials): Promise<pg.Client> {
  const attempt = async (password: string) => {
    const client = new pg.Client({ connectionString: clusterUrl(port, credentials.superuser, password) });
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
  };
  try {
    return await attempt(credentials.superuserPassword);
  } catch (error) {
    // 28P01: invalid password. Only a cluster of the former superuser may still have the former password.
    if ((error as { code?: string }).code !== '28P01' || credentials.superuser !== FORMER_SUPERUSER) throw error;
    return attempt(FORMER_PASSWORD).catch(() => {
      throw new Error(`the embedded PostgreSQL refuses both its credentials file's superuser password and the former one: ` +
        'restore the data directory\'s relayer-credentials.json, or delete the data directory to start afresh');
    });
  }
}

/**
 * Hands what the superuser owns in this database (a cluster made when the service connected as
 * superuser) to the service's role: schemas but the system's, then tables, views and sequences a
 * table does not own (those follow their table), routines and types. The bootstrap superuser's
 * objects cannot be moved with REASSIGN OWNED (the system's own are among them), hence one by one.
 */
const REASSIGN_TO_SERVICE_ROLE = `
DO $reassign$
DECLARE
  target name := :role;
  me oid := (SELECT oid FROM pg_roles WHERE rolname = current_user);
  item record;
BEGIN
  FOR item IN SELECT nspname FROM pg_namespace
    WHERE nspowner = me AND nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', item.nspname, target);
  END LOOP;
  FOR item IN SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relowner = me AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER %s %I.%I OWNER TO %I',
      CASE item.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
      item.nspname, item.relname, target);
  END LOOP;
  FOR item IN SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relowner = me AND c.relkind = 'S' AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')) LOOP
    EXECUTE format('ALTER SEQUENCE %I.%I OWNER TO %I', item.nspname, item.relname, target);
  END LOOP;
  FOR item IN SELECT p.oid::regprocedure AS signature, p.prokind FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE p.proowner = me AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I', CASE item.prokind WHEN 'a' THEN 'AGGREGATE' ELSE 'ROUTINE' END, item.signature, target);
  END LOOP;
  FOR item IN SELECT t.oid::regtype AS name, t.typtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE t.typowner = me AND t.typtype IN ('e', 'd', 'r', 'c') AND t.typelem = 0
      AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
      AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I', CASE item.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, item.name, target);
  END LOOP;
END
$reassign$`;
