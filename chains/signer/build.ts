import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildToolEnv } from '../../config/child-env.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Builds the PKCS#11 signer (`npm run build:signer`: Cargo, profile `devnet`, locked dependencies;
 * a no-op when nothing changed). Throws with Cargo's exit status when the build fails.
 */
export function buildPkcs11Signer({ quiet = false }: { quiet?: boolean } = {}): void {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', '--silent', 'build:signer'], {
    cwd: REPO_ROOT, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit', env: buildToolEnv(),
  });
  if (build.error) throw new Error(`npm run build:signer could not start: ${build.error.message}`);
  if (build.status !== 0) throw new Error(`npm run build:signer failed (exit ${build.status}); see Cargo's output above`);
}
