import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** Where the built page is (served at /app by api/routes/app-page.ts; not committed). */
export const APP_DIST = fileURLToPath(new URL('./dist/', import.meta.url));

/**
 * The bundle budget (app/README.md): what a first visit downloads, compressed as the wire carries
 * it. app/app.test.ts fails the build above it.
 */
export const BUNDLE_BUDGET = { gzipBytes: 60_000, rawBytes: 200_000 } as const;

export interface BuiltApp { files: Record<string, { rawBytes: number; gzipBytes: number }>; rawBytes: number; gzipBytes: number }

/**
 * Builds the page into app/dist: app/src/main.ts bundled by esbuild (minified ES module for current
 * browsers, with the client package and what it needs of ethers and @stellar/freighter-api), and
 * the static index.html and app.css. Nothing is fetched at run time from anywhere but the service.
 */
export async function buildApp(target: string = APP_DIST): Promise<BuiltApp> {
  // Built aside, then swapped in: a service serving the old build never sees half a new one.
  const outDir = `${target.replace(/\/$/, '')}.tmp-${process.pid}`;
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [fileURLToPath(new URL('./src/main.ts', import.meta.url))],
    outfile: `${outDir}/app.js`,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16'],
    legalComments: 'none',
    // @stellar/freighter-api's bundle reads `global` (webpack's Node shim) and Buffer only on paths the page does not take.
    define: { global: 'globalThis' },
    logLevel: 'warning',
  });
  for (const name of ['index.html', 'app.css']) copyFileSync(fileURLToPath(new URL(`./static/${name}`, import.meta.url)), `${outDir}/${name}`);
  const files: BuiltApp['files'] = {};
  for (const name of ['index.html', 'app.css', 'app.js']) {
    const bytes = readFileSync(`${outDir}/${name}`);
    files[name] = { rawBytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
  }
  rmSync(target, { recursive: true, force: true });
  renameSync(outDir, target);
  const sum = (key: 'rawBytes' | 'gzipBytes') => Object.values(files).reduce((total, file) => total + file[key], 0);
  return { files, rawBytes: sum('rawBytes'), gzipBytes: sum('gzipBytes') };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const built = await buildApp();
  console.log(`app built into ${APP_DIST}: ${built.rawBytes} bytes, ${built.gzipBytes} gzipped`, built.files);
}
