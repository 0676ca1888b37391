#!/usr/bin/env node
// Writes the SBOM of the relayer image: builds it (scripts/build-image.mjs, cached layers), saves it as an
// OCI archive and has syft (scripts/install-sbom-tool.mjs, pinned) list everything in it: the Debian
// packages of the base, Node's binary, every npm package in /app/node_modules and the Rust binaries'
// crates. `.ci/run` runs it after the tests.
//   node scripts/write-sbom.mjs [outDir]     default sbom/ (git-ignored)
// Writes <outDir>/relayer-image.spdx.json (SPDX 2.3) and <outDir>/relayer-image.cdx.json (CycloneDX), and
// <outDir>/relayer-image.json: the image, its id, and the counts found. Fails when the SBOM misses what the
// image is known to hold (the lockfile's runtime packages it checks, Debian's libc, the Node binary), so an
// SBOM that scanned the wrong thing or nothing does not pass quietly.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildImage } from './build-image.mjs';
import { installSyft, SYFT_BINARY, SYFT_PIN, syftInstalled } from './install-sbom-tool.mjs';
import { podman } from './podman.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Packages the image must hold at run time (package.json dependencies the processes load). */
const EXPECTED_NPM = ['express', 'pg', 'knex', 'zod', '@temporalio/worker', 'snarkjs', 'ethers', 'prom-client', 'pino'];

/** Builds the image, scans it with syft, checks the result; returns the summary it writes. */
export function writeSbom(outDir = path.join(root, 'sbom'), image = 'localhost/relayer:sbom', log = console.error) {
  if (!syftInstalled()) {
    log(`installing syft ${SYFT_PIN.version} (go install)`);
    installSyft();
  }
  const built = buildImage(image, log);
  const imageId = podman(['image', 'inspect', '--format', '{{.Id}}', image]).stdout.trim();
  const scratch = mkdtempSync(path.join(tmpdir(), 'relayer-sbom-'));
  try {
    const archive = path.join(scratch, 'image.tar');
    podman(['save', '--format', 'oci-archive', '-o', archive, image]);
    mkdirSync(outDir, { recursive: true });
    const spdx = path.join(outDir, 'relayer-image.spdx.json');
    const cyclonedx = path.join(outDir, 'relayer-image.cdx.json');
    // syft gets a minimal environment: its cache and config under the scratch folder, no update check.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch, TMPDIR: scratch, SYFT_CHECK_FOR_APP_UPDATE: 'false' };
    const result = spawnSync(SYFT_BINARY, ['scan', `oci-archive:${archive}`, '--source-name', image.replace(/:.*$/, ''), '--source-version', imageId,
      '-o', `spdx-json=${spdx}`, '-o', `cyclonedx-json=${cyclonedx}`, '-q'], { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (result.error || result.status !== 0) throw new Error(`syft failed: ${result.error?.message ?? `exit ${result.status}`}\n${result.stderr}`);
    const document = JSON.parse(readFileSync(spdx, 'utf8'));
    const packages = document.packages ?? [];
    const named = (name) => packages.some((p) => p.name === name);
    const missing = [...EXPECTED_NPM.filter((name) => !named(name)), ...['libc6', 'node'].filter((name) => !named(name))];
    if (missing.length > 0) throw new Error(`the SBOM of ${image} misses ${missing.join(', ')}: syft did not see what the image holds (${packages.length} packages listed)`);
    const kinds = {};
    for (const p of packages) {
      const purl = (p.externalRefs ?? []).find((r) => r.referenceType === 'purl')?.referenceLocator ?? '';
      const kind = /^pkg:(\w+)\//.exec(purl)?.[1] ?? 'other';
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
    const summary = { image, imageId, sizeBytes: built.sizeBytes, syft: SYFT_PIN.version, packages: packages.length, byKind: kinds, files: [spdx, cyclonedx] };
    writeFileSync(path.join(outDir, 'relayer-image.json'), `${JSON.stringify(summary, null, 2)}\n`);
    return summary;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const started = Date.now();
  const summary = writeSbom(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
  console.log(JSON.stringify({ ...summary, seconds: Math.round((Date.now() - started) / 1000) }));
}
