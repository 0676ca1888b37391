import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of the processes a bench started, by role, read from Linux's /proc: for each live
 * descendant of a root pid, user + system time (with the times of its children already waited
 * for, so PostgreSQL's ended backends count towards the postmaster). Snapshot before and after a
 * run; the difference is what each role spent on it.
 */

const TICKS_PER_SECOND = 100;

interface ProcInfo { pid: number; ppid: number; cpuSeconds: number; command: string }

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return { pid, ppid: Number(fields[1]), cpuSeconds: ticks / TICKS_PER_SECOND, command };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** Every live process below `root` (not `root` itself). */
function descendants(root: number): ProcInfo[] {
  const all = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map((name) => readProc(Number(name))).filter((p): p is ProcInfo => p !== undefined);
  const children = new Map<number, ProcInfo[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: ProcInfo[] = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop()!) ?? []) {
      found.push(child);
      stack.push(child.pid);
    }
  }
  return found;
}

/** A role: the first whose pattern matches a process's command line takes its CPU time. */
export type Roles = Array<[role: string, pattern: RegExp]>;

/**
 * CPU seconds by role of `root`'s descendants now; `self` adds `root`'s own time under that role.
 * A process no pattern matches counts towards its nearest ancestor's role below `root`: a prover's
 * native proving processes (`relayer-groth16`, spawned by its pool's threads) are the prover's CPU,
 * the API's in the embedded orchestrator (they were counted nowhere before).
 */
export function cpuByRole(root: number, roles: Roles, self?: string): Record<string, number> {
  const totals: Record<string, number> = Object.fromEntries(roles.map(([role]) => [role, 0]));
  const found = descendants(root);
  const byPid = new Map(found.map((p) => [p.pid, p]));
  const roleOf = (p: ProcInfo | undefined): string | undefined => {
    for (let at = p; at; at = byPid.get(at.ppid)) {
      const role = roles.find(([, pattern]) => pattern.test(at!.command))?.[0];
      if (role) return role;
    }
    return undefined;
  };
  for (const p of found) {
    const role = roleOf(p);
    if (role) totals[role]! += p.cpuSeconds;
  }
  if (self) {
    const usage = process.cpuUsage();
    totals[self] = (totals[self] ?? 0) + (usage.user + usage.system) / 1e6;
  }
  return totals;
}

/** after - before, per role. */
export function cpuSpent(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([role, seconds]) => [role, Math.max(0, seconds - (before[role] ?? 0))]));
}
