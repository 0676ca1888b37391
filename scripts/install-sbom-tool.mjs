#!/usr/bin/env node
// Installs syft (Anchore's SBOM generator), pinned, into the git-ignored .tools/sbom/bin with
// `go install` from the Go module proxy: a source build with the machine's Go, no prebuilt download.
// `.ci/run` runs it before writing the image's SBOM; `node scripts/install-sbom-tool.mjs` does it by hand.
// A second run with the same pin does nothing. The build takes a few minutes on two cores the first time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The module and version `go install` builds (github.com/anchore/syft, its cmd/syft). */
export const SYFT_PIN = { module: 'github.com/anchore/syft/cmd/syft', version: 'v1.57.1' };

const root = fileURLToPath(new URL('..', import.meta.url));
export const SBOM_TOOLS_DIR = path.join(root, '.tools', 'sbom');
export const SYFT_BINARY = path.join(SBOM_TOOLS_DIR, 'bin', 'syft');
const stamp = path.join(SBOM_TOOLS_DIR, 'version.json');

/** True when syft is installed at the pinned version. */
export function syftInstalled() {
  return existsSync(SYFT_BINARY) && existsSync(stamp) && readFileSync(stamp, 'utf8') === JSON.stringify(SYFT_PIN);
}

/**
 * Builds syft at the pin into .tools/sbom/bin. The go command gets an explicit environment: where to put
 * the binary and its caches, and the proxy settings it already has; nothing else of this process's.
 */
export function installSyft() {
  rmSync(SBOM_TOOLS_DIR, { recursive: true, force: true });
  mkdirSync(path.dirname(SYFT_BINARY), { recursive: true });
  const home = process.env.HOME ?? root;
  const env = {
    PATH: process.env.PATH ?? '/usr/local/go/bin:/usr/bin:/bin',
    HOME: home,
    GOBIN: path.dirname(SYFT_BINARY),
    GOPATH: process.env.GOPATH ?? path.join(home, 'go'),
    GOCACHE: process.env.GOCACHE ?? path.join(home, '.cache', 'go-build'),
    GOFLAGS: '-buildvcs=false',
    CGO_ENABLED: '0',
    ...Object.fromEntries(['GOPROXY', 'GONOSUMDB', 'GOSUMDB', 'GOTOOLCHAIN', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy', 'SSL_CERT_FILE']
      .filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]])),
  };
  const result = spawnSync('go', ['install', `${SYFT_PIN.module}@${SYFT_PIN.version}`], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error || result.status !== 0) {
    throw new Error(`go install ${SYFT_PIN.module}@${SYFT_PIN.version} failed: ${result.error?.message ?? `exit ${result.status}`} (needs Go 1.26+ on PATH)`);
  }
  if (!existsSync(SYFT_BINARY)) throw new Error(`go install left no syft at ${SYFT_BINARY}`);
  writeFileSync(stamp, JSON.stringify(SYFT_PIN));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const started = Date.now();
  if (syftInstalled()) console.log(`syft ${SYFT_PIN.version} already installed: ${SYFT_BINARY}`);
  else {
    installSyft();
    console.log(`syft ${SYFT_PIN.version} installed: ${SYFT_BINARY} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
}
