import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** A process below another, as /proc shows it. */
export interface ProcessInfo {
  pid: number;
  /** The basename of its executable (`postgres`, `anvil`, `relayer-groth16`...). */
  program: string;
  /** Its command line, arguments joined by spaces. */
  commandLine: string;
  /** Its /proc/<pid>/environ as text (NUL-separated entries); empty when it could not be read. */
  environ: string;
  /** The NAME=value entries of `environ` by name (PostgreSQL overwrites part of the area with its process title). */
  variables: Map<string, string>;
}

/** Every live process below `root` (children, their children...), read from /proc; processes that exit meanwhile are left out. */
export function descendantsOf(root: number): ProcessInfo[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    if (!stat) continue;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so count from its last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const found: ProcessInfo[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    queue.push(...(children.get(pid) ?? []));
    const info = describe(pid);
    if (info) found.push(info);
  }
  return found;
}

function describe(pid: number): ProcessInfo | undefined {
  let program: string;
  try {
    program = path.basename(readlinkSync(`/proc/${pid}/exe`));
  } catch {
    return undefined;
  }
  const environ = read(`/proc/${pid}/environ`) ?? '';
  const variables = new Map<string, string>();
  for (const entry of environ.split('\0')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(entry);
    if (match) variables.set(match[1]!, match[2]!);
  }
  return { pid, program, commandLine: (read(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim(), environ, variables };
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
