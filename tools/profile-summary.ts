/**
 * `npx tsx tools/profile-summary.ts <file.cpuprofile> [top]`: where a CPU profile's busy time went.
 *
 * Prints each package's (or our folder's, or Node's) share of the busy samples, self and inclusive
 * (a sample counts once for every package on its stack), then the top functions by self time.
 * Idle and the profiler's own "(program)" samples are left out of the busy total.
 * Profiles come from `BENCH_PROFILE=dir npm run bench:api` or `node --cpu-prof`.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

/** Who a frame belongs to: an npm package, one of our top folders, Node itself, or V8's pseudo-frames. */
export function ownerOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return 'node (internals)';
  const match = /\/(api|db|ads|auth|chains|domain|runtime|trades|workflows|registry|tools)\//.exec(url);
  return match ? `ours: ${match[1]}/` : url;
}

function summarise(profile: Profile, top: number): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfTime = new Map<number, number>();
  profile.samples.forEach((id, i) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

  const ownerSelf = new Map<string, number>();
  const ownerInclusive = new Map<string, number>();
  // Node's and V8's own frames (syscalls, Buffer, streams) charged to the nearest package or file up the stack.
  const ownerCharged = new Map<string, number>();
  const functionSelf = new Map<string, number>();
  let busy = 0;
  for (const [id, time] of selfTime) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    busy += time;
    const owner = ownerOf(url, functionName);
    ownerSelf.set(owner, (ownerSelf.get(owner) ?? 0) + time);
    const key = `${functionName || '(anonymous)'}  ${owner}${url ? ` ${url.split('/').pop()}:${lineNumber + 1}` : ''}`;
    functionSelf.set(key, (functionSelf.get(key) ?? 0) + time);
    let charged = owner;
    for (let at: number | undefined = id; at !== undefined && (charged === 'node (internals)' || charged === '(native)'); at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      charged = ownerOf(frame.url, frame.functionName);
    }
    ownerCharged.set(charged, (ownerCharged.get(charged) ?? 0) + time);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const frameOwner = ownerOf(frame.url, frame.functionName);
      if (frame.functionName === '(root)' || seen.has(frameOwner)) continue;
      seen.add(frameOwner);
      ownerInclusive.set(frameOwner, (ownerInclusive.get(frameOwner) ?? 0) + time);
    }
  }
  const pct = (time: number) => `${((100 * time) / busy).toFixed(1).padStart(5)}%`;
  const lines = [
    `busy ${(busy / 1000).toFixed(0)} ms`,
    '',
    'owner                              self  charged  inclusive   (charged: self plus the Node/native frames it called)',
  ];
  const owners = new Set([...ownerSelf.keys(), ...ownerCharged.keys()]);
  for (const owner of [...owners].sort((a, b) => (ownerCharged.get(b) ?? 0) - (ownerCharged.get(a) ?? 0)).slice(0, top)) {
    lines.push(`${owner.padEnd(32)} ${pct(ownerSelf.get(owner) ?? 0)}  ${pct(ownerCharged.get(owner) ?? 0)}   ${pct(ownerInclusive.get(owner) ?? 0)}`);
  }
  lines.push('', 'function (self)');
  for (const [key, time] of [...functionSelf].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${pct(time)}  ${key}`);
  return lines;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const [file, top = '25'] = process.argv.slice(2);
  if (!file) throw new Error('usage: tsx tools/profile-summary.ts <file.cpuprofile> [top]');
  console.log(summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(top)).join('\n'));
}
