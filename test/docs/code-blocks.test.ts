import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { codeBlocks, documentedPages, type CodeBlock } from './code-blocks.ts';

/**
 * Every code block a reader may copy from README.md, docs/, docs/flows/ and client/README.md is
 * checked, so an example that drifts from the code fails here: TypeScript and JavaScript blocks
 * type-check with `tsc --strict` (one program over all of them) against the client package as its
 * exports map resolves it (node_modules/@cross-chain-relayer/client, the files `npm pack` ships) and
 * the project's dependencies; shell blocks parse (`bash -n`) and name only npm scripts package.json
 * has; JSON blocks parse. The names an example uses without defining them (`me`, a signed client;
 * `tradeId`) are declared once, with their types, in givens.ts. A block that is deliberately not
 * code of its language is marked (`<!-- docs-test: fragment -->` before it, or ```ts fragment) and
 * counted: the marks stay few.
 */

const run = promisify(execFile);
const ROOT = path.join(import.meta.dirname, '..', '..');
/** Diagrams and plain text: not code, nothing to compile. */
const NOT_CODE = new Set(['mermaid', 'text', 'txt']);
const TYPESCRIPT = new Set(['ts', 'typescript', 'tsx']);
const JAVASCRIPT = new Set(['js', 'javascript', 'mjs']);
const SHELL = new Set(['sh', 'bash', 'shell', 'console']);
/** How many blocks may be marked fragments (raise it only with a reason in the page). */
const MAX_FRAGMENTS = 3;

const blocks: CodeBlock[] = documentedPages(ROOT).flatMap((file) => codeBlocks(file, readFileSync(path.join(ROOT, file), 'utf8')));
const checked = blocks.filter((block) => !block.fragment && !NOT_CODE.has(block.lang));
const where = (block: CodeBlock) => `${block.file}:${block.line}`;
// Inside the checkout, so that the client package and the project's dependencies resolve from its node_modules.
const work = path.join(ROOT, '.data', `docs-examples-${process.pid}`);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('reading a page\'s code blocks', () => {
  it('finds fenced blocks with their language and line, longer and tilde fences included, and the two fragment marks', () => {
    const page = [
      'text', '```ts', 'const a = 1;', '```', '<!-- docs-test: fragment -->', '```sh', 'npm run x <not shell>', '```',
      '````md', '```ts', 'inner', '```', '````', '~~~json fragment', '{', '~~~', '```', 'bare',
    ].join('\n');
    expect(codeBlocks('page.md', page).map(({ line, lang, fragment, code }) => ({ line, lang, fragment, code }))).toEqual([
      { line: 2, lang: 'ts', fragment: false, code: 'const a = 1;' },
      { line: 6, lang: 'sh', fragment: true, code: 'npm run x <not shell>' },
      { line: 9, lang: 'md', fragment: false, code: '```ts\ninner\n```' },
      { line: 14, lang: 'json', fragment: true, code: '{' },
      { line: 17, lang: '', fragment: false, code: 'bare' },
    ]);
  });
});

describe('the code blocks of the docs', () => {
  it('are all of a language this test checks (or diagrams), with few marked fragments', () => {
    const fragments = blocks.filter((block) => block.fragment).map(where);
    console.log(`docs code blocks: ${blocks.length}, checked ${checked.length}; marked fragments (${fragments.length}): ${fragments.join(', ') || 'none'}`);
    expect(fragments.length).toBeLessThanOrEqual(MAX_FRAGMENTS);
    const known = (lang: string) => [TYPESCRIPT, JAVASCRIPT, SHELL].some((set) => set.has(lang)) || lang === 'json';
    const unknown = checked.filter((block) => !known(block.lang)).map((block) => `${where(block)} (${block.lang || 'no language'})`);
    expect(unknown, 'give each fence a language this test checks').toEqual([]);
  });

  it('TypeScript and JavaScript blocks type-check with tsc --strict against the client package', async () => {
    mkdirSync(work, { recursive: true });
    copyFileSync(path.join(import.meta.dirname, 'givens.ts'), path.join(work, 'givens.ts'));
    const sources = new Map<string, CodeBlock>();
    for (const block of checked.filter((b) => TYPESCRIPT.has(b.lang) || JAVASCRIPT.has(b.lang))) {
      const name = `${block.file.replaceAll(/[/.]/g, '_')}_${block.line}.${TYPESCRIPT.has(block.lang) ? 'ts' : 'js'}`;
      // Line n of the file is line n of the block; `export {}` makes each block a module of its own.
      writeFileSync(path.join(work, name), `${block.code}\nexport {};\n`);
      sources.set(name, block);
    }
    writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, allowJs: true, checkJs: true,
        lib: ['ES2023', 'DOM', 'DOM.Iterable'], types: ['node'], skipLibCheck: true, noEmit: true, esModuleInterop: true,
      },
      include: ['*.ts', '*.js'],
    }));
    const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc');
    const output = await run(tsc, ['-p', work, '--pretty', 'false'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, maxBuffer: 16 * 1024 * 1024 })
      .then(() => '', (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`);
    // file(line,col): error TS...: message -> the page's own line.
    const errors = output.split('\n').filter(Boolean).map((line) => {
      const match = /^(?:.*[\\/])?([^\\/(]+)\((\d+),(\d+)\): (.*)$/.exec(line);
      const block = match && sources.get(match[1]!);
      return block ? `${block.file}:${block.line + Number(match[2])} (col ${match[3]}): ${match[4]}` : line;
    });
    expect(errors).toEqual([]);
  }, 120_000);

  it('shell blocks parse and run only npm scripts package.json defines', async () => {
    const scripts = new Set(Object.keys((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts));
    const problems: string[] = [];
    for (const block of checked.filter((b) => SHELL.has(b.lang))) {
      const parsed = await new Promise<string>((resolve) => {
        const child = execFile('bash', ['-n'], { env: { PATH: process.env.PATH ?? '' } }, (error, _stdout, stderr) => resolve(error ? stderr.trim() : ''));
        child.stdin!.end(block.code);
      });
      if (parsed) problems.push(`${where(block)}: ${parsed}`);
      for (const [offset, text] of block.code.split('\n').entries()) {
        for (const [, script] of text.replace(/#.*$/, '').matchAll(/\bnpm run(?:-script)? ([\w:.-]+)/g)) {
          if (!scripts.has(script!)) problems.push(`${block.file}:${block.line + 1 + offset}: npm run ${script}: no such script in package.json`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('JSON blocks parse', () => {
    const problems = checked.filter((block) => block.lang === 'json').flatMap((block) => {
      try {
        JSON.parse(block.code);
        return [];
      } catch (error) {
        return [`${where(block)}: ${(error as Error).message}`];
      }
    });
    expect(problems).toEqual([]);
  });
});
