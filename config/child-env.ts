/**
 * What every child process may take from this process's environment: where programs are, the
 * locale, the time zone and the temporary directory. Nothing here is a secret; a child's own
 * settings are added by its caller, and anything else (JWT_SECRET, the relayer keys, PKCS11_PIN,
 * DATABASE_URL) never reaches it.
 */
export const CHILD_BASE_ENV = ['PATH', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TZ', 'TMPDIR'] as const;

/** Rust children's diagnostics (a backtrace, a log filter), harmless to pass on. */
export const RUST_DIAGNOSTICS_ENV = ['RUST_BACKTRACE', 'RUST_LOG'] as const;

export interface ChildEnvOptions {
  /** More names to copy from `from` when set (HOME, a PKCS#11 module's own configuration). */
  inherit?: readonly string[];
  /** Where inherited values come from; `process.env` by default. */
  from?: NodeJS.ProcessEnv;
}

/**
 * The environment of a child process: `CHILD_BASE_ENV` and `options.inherit` copied from this
 * process when set, then the child's own settings (`own`, unset values left out). Never the whole
 * `process.env`: a child sees only what is named here, so a secret of this process cannot leak
 * into another process's `/proc/<pid>/environ`.
 */
export function childEnv(own: Record<string, string | undefined> = {}, options: ChildEnvOptions = {}): Record<string, string> {
  const from = options.from ?? process.env;
  const env: Record<string, string> = {};
  for (const name of [...CHILD_BASE_ENV, ...(options.inherit ?? [])]) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(own)) {
    if (value !== undefined) env[name] = value;
  }
  return env;
}
