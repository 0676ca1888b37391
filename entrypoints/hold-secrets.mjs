/**
 * Preloaded before the TypeScript loader (`node --import ./entrypoints/hold-secrets.mjs --import tsx
 * entrypoints/main.ts`; plain JavaScript, as nothing compiles TypeScript yet): moves the secret
 * settings out of `process.env` into a value only this process's config reads
 * (config/held-secrets.ts). A child process inherits `process.env` unless its spawner says
 * otherwise, and not every spawner is ours: tsx's esbuild service, started to compile the first
 * file, would otherwise hold every secret in its /proc/<pid>/environ for the life of the process.
 */
const SECRET_SETTINGS = [
  'DATABASE_URL', 'JWT_SECRET', 'JWT_PREVIOUS_SECRET', 'SEP10_SIGNING_SECRET',
  'RELAYER_EVM_PRIVATE_KEY', 'RELAYER_STELLAR_SECRET', 'RELAYER_EVM_PREVIOUS_PRIVATE_KEY', 'RELAYER_STELLAR_PREVIOUS_SECRET',
  'KEEPER_EVM_PRIVATE_KEY', 'KEEPER_STELLAR_SECRET',
  'PKCS11_PIN', 'PKCS11_KEEPER_PIN', 'TEMPORAL_API_KEY',
];

const held = {};
for (const name of SECRET_SETTINGS) {
  if (process.env[name] === undefined) continue;
  held[name] = process.env[name];
  delete process.env[name];
}
globalThis[Symbol.for('relayer.heldSecretSettings')] = Object.freeze(held);
