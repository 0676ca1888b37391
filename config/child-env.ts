/**
 * What every child process may take from this process's environment: where programs are, the
 * locale, the time zone and the temporary directory. Nothing here is a secret; a child's own
 * settings are added by its caller, and anything else (JWT_SECRET, the relayer keys, PKCS11_PIN,
 * DATABASE_URL) never reaches it.
 */
export const CHILD_BASE_ENV = ['PATH', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TZ', 'TMPDIR'] as const;

/** Rust children's diagnostics (a backtrace, a log filter), harmless to pass on. */
export const RUST_DIAGNOSTICS_ENV = ['RUST_BACKTRACE', 'RUST_LOG'] as const;

/**
 * What a build (cargo, rustup, or npm running one) needs besides the base set: the user's home (the
 * toolchains live there), a proxy and CA certificates to fetch crates, and the toolchains' own settings.
 */
export const BUILD_TOOL_ENV = ['HOME', 'USER', 'LOGNAME', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY',
  'http_proxy', 'https_proxy', 'no_proxy'] as const;
export const BUILD_TOOL_ENV_PATTERN = /^(CARGO_|RUSTUP_|RUSTC|RUST_|RUSTFLAGS$|RUSTDOCFLAGS$|CC$|CXX$|AR$|CFLAGS$|CXXFLAGS$|LDFLAGS$|PKG_CONFIG|npm_config_)/;

/** The environment of a build tool this process runs (the first start's cargo builds): `childEnv` with `BUILD_TOOL_ENV`. */
export function buildToolEnv(): Record<string, string> {
  return childEnv({}, { inherit: BUILD_TOOL_ENV, matching: BUILD_TOOL_ENV_PATTERN });
}

export interface ChildEnvOptions {
  /** More names to copy from `from` when set (HOME, a PKCS#11 module's own configuration). */
  inherit?: readonly string[];
  /** Names matching this are copied too (a toolchain's own family of settings). */
  matching?: RegExp;
  /** Where inherited values come from; `process.env` by default. */
  from?: NodeJS.ProcessEnv;
}

/**
 * The environment of a child process: `CHILD_BASE_ENV`, `options.inherit` and the names
 * `options.matching` matches copied from this process when set, then the child's own settings (`own`, unset values left out). Never the whole
 * `process.env`: a child sees only what is named here, so a secret of this process cannot leak
 * into another process's `/proc/<pid>/environ`.
 */
export function childEnv(own: Record<string, string | undefined> = {}, options: ChildEnvOptions = {}): Record<string, string> {
  const from = options.from ?? process.env;
  const env: Record<string, string> = {};
  const matching = options.matching ? Object.keys(from).filter((name) => options.matching!.test(name)) : [];
  for (const name of [...CHILD_BASE_ENV, ...(options.inherit ?? []), ...matching]) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(own)) {
    if (value !== undefined) env[name] = value;
  }
  return env;
}
