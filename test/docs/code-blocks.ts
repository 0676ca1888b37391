import { readdirSync } from 'node:fs';
import path from 'node:path';

/** One fenced code block of a Markdown page. */
export interface CodeBlock {
  /** The page, relative to the repository root. */
  file: string;
  /** The 1-based line of the opening fence. */
  line: number;
  /** The fence's first word (`ts`, `sh`, ...), lower-cased; '' for a bare fence. */
  lang: string;
  /** Marked as a deliberate fragment: `<!-- docs-test: fragment -->` on the line before the fence, or `fragment` in its info string. */
  fragment: boolean;
  code: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;
const FRAGMENT_MARK = /<!--\s*docs-test:\s*fragment\s*-->/;

/** The pages whose examples a reader copies: the root README, docs/ and docs/flows/, and the client package's README. */
export function documentedPages(root: string): string[] {
  const pages = (dir: string) => readdirSync(path.join(root, dir)).filter((name) => name.endsWith('.md')).sort().map((name) => path.join(dir, name));
  return ['README.md', ...pages('docs'), ...pages(path.join('docs', 'flows')), path.join('client', 'README.md')];
}

/**
 * Every fenced block of `text` (CommonMark fences: three or more backticks or tildes, closed by a
 * fence of the same character at least as long), with its language and whether it is marked a fragment.
 */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open as unknown as [string, string, string, string];
    const words = info.trim().split(/\s+/).filter(Boolean);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j += 1) {
      const close = FENCE.exec(lines[j]!);
      if (close && close[2]![0] === fence[0] && close[2]!.length >= fence.length && close[3]!.trim() === '') break;
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!);
    }
    blocks.push({
      file, line: i + 1, lang: (words[0] ?? '').toLowerCase(),
      fragment: words.slice(1).includes('fragment') || FRAGMENT_MARK.test(lines[i - 1] ?? ''),
      code: body.join('\n'),
    });
    i = j;
  }
  return blocks;
}
