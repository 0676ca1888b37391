/** Where entrypoints/hold-secrets.mjs leaves the secret settings it took out of `process.env`. */
const HELD = Symbol.for('relayer.heldSecretSettings');

/**
 * The settings of this process: `process.env` with the secret settings the preload
 * (entrypoints/hold-secrets.mjs) moved out of it put back, in a copy only the config reads. Without
 * the preload (tests, tools) it is `process.env` as it is.
 */
export function processSettings(): Record<string, string | undefined> {
  const held = (globalThis as { [HELD]?: Record<string, string> })[HELD];
  return held ? { ...process.env, ...held } : process.env;
}
