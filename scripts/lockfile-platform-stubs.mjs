#!/usr/bin/env node
/**
 * `node scripts/lockfile-platform-stubs.mjs`: run after any `npm install` that changes dependencies.
 *
 * Why: packages such as @foundry-rs/anvil and @swc/core ship one optional package per platform.
 * The npm registry reachable from our machines does not serve the other platforms' packages, so
 * npm writes a lockfile without them, and `npm ci` then refuses it ("Missing: ... from lock file").
 * This adds, for every optional dependency the lockfile lacks, an entry with its version and the
 * os/cpu its name declares. npm ci on this platform skips them (wrong os/cpu) and never fetches them;
 * on a platform that needs one, npm fetches it by name and version as usual.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openbsd', 'sunos', 'aix'];
const CPU = { x64: 'x64', amd64: 'x64', arm64: 'arm64', aarch64: 'arm64', arm: 'arm', ia32: 'ia32', ppc64: 'ppc64', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64' };

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const added = [];
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = location === '' ? 'node_modules' : `${location}/node_modules`;
    if (lock.packages[`${base}/${name}`] || lock.packages[`node_modules/${name}`]) continue;
    const parts = name.split('/').pop().split('-');
    const os = parts.find((part) => OS.includes(part));
    const cpu = parts.map((part) => CPU[part]).find(Boolean);
    if (!os || !cpu) continue; // not a per-platform package: leave it to npm
    lock.packages[`node_modules/${name}`] = { version, cpu: [cpu], optional: true, os: [os] };
    added.push(`${name}@${version} (${os}/${cpu})`);
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length ? `added ${added.length} platform stubs:\n  ${added.join('\n  ')}` : 'lockfile already complete');
