import path from 'node:path';
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

/** The Stellar chunk's budget (stellar-sdk), fetched only when a Stellar transaction is sent; checked apart. */
export const STELLAR_CHUNK_BUDGET = { gzipBytes: 320_000, rawBytes: 1_200_000 } as const;

interface Sizes { rawBytes: number; gzipBytes: number }
/**
 * `files`: every built file; `rawBytes`/`gzipBytes`: what a first visit downloads (index.html,
 * app.css, app.js and the chunks app.js imports statically); `stellar`: the chunks behind the
 * dynamic import of wallets/stellar-send.ts, not already in the first visit.
 */
export interface BuiltApp { files: Record<string, Sizes>; rawBytes: number; gzipBytes: number; stellar: Sizes & { files: string[] } }

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
  const result = await build({
    entryPoints: { app: fileURLToPath(new URL('./src/main.ts', import.meta.url)) },
    outdir: outDir,
    // The Stellar code (stellar-sdk) behind a dynamic import becomes its own chunk, loaded when used.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    metafile: true,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16'],
    legalComments: 'none',
    // @stellar/freighter-api's bundle reads `global` (webpack's Node shim) and Buffer only on paths the page does not take.
    define: { global: 'globalThis' },
    // The client's `./execute` names node:fs for its Node file store only, behind an import() the page never reaches.
    external: ['node:*'],
    logLevel: 'warning',
  });
  for (const name of ['index.html', 'app.css']) copyFileSync(fileURLToPath(new URL(`./static/${name}`, import.meta.url)), `${outDir}/${name}`);
  const outputs = result.metafile.outputs;
  const nameOf = (output: string) => path.basename(output);
  const js = Object.keys(outputs).filter((output) => output.endsWith('.js'));
  // The first visit: app.js and what it imports statically, transitively; the rest is behind import().
  const first = new Set<string>();
  const visit = (output: string) => {
    if (first.has(output)) return;
    first.add(output);
    for (const imported of outputs[output]?.imports ?? []) if (imported.kind === 'import-statement' && outputs[imported.path]) visit(imported.path);
  };
  visit(js.find((output) => nameOf(output) === 'app.js')!);
  const files: BuiltApp['files'] = {};
  for (const name of ['index.html', 'app.css', ...js.map(nameOf)]) {
    const bytes = readFileSync(`${outDir}/${name}`);
    files[name] = { rawBytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
  }
  const firstVisit = ['index.html', 'app.css', ...[...first].map(nameOf)];
  const later = js.map(nameOf).filter((name) => !firstVisit.includes(name));
  rmSync(target, { recursive: true, force: true });
  renameSync(outDir, target);
  const sum = (names: string[], key: keyof Sizes) => names.reduce((total, name) => total + files[name]![key], 0);
  return {
    files, rawBytes: sum(firstVisit, 'rawBytes'), gzipBytes: sum(firstVisit, 'gzipBytes'),
    stellar: { files: later, rawBytes: sum(later, 'rawBytes'), gzipBytes: sum(later, 'gzipBytes') },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const built = await buildApp();
  console.log(`app built into ${APP_DIST}: ${built.rawBytes} bytes, ${built.gzipBytes} gzipped`, built.files);
}
