/**
 * `npm run ceremony -- <verb> [--option value ...]`: the multi-party proving-key ceremony
 * (circuits/README.md, "Running a proving-key ceremony with real contributors"). Exit codes: 0 done,
 * 1 refused (the message says which check failed), 2 bad usage.
 */
import { parseArgs } from 'node:util';
import { artifacts } from '../../circuits/artifacts.ts';
import { beacon, contribute, init, phase1 } from '../../circuits/ceremony/steps.ts';
import { CeremonyError, readTranscript } from '../../circuits/ceremony/transcript.ts';
import { minContributorsFrom, verifyCeremony } from '../../circuits/ceremony/zkey-check.ts';
import { finalize } from './finalize.ts';

const USAGE = `usage: npm run ceremony -- <verb> [options]
  phase1     --power 13 --out pot.ptau --contributors a,b,c --beacon <hex>     (devnet/tests only: local multi-party phase 1)
  init       --ptau pot.ptau --ptau-sha256 <hex> [--ptau-source URL] --out deposit_0000.zkey --transcript transcript.json
  contribute --ptau pot.ptau --in deposit_000N.zkey --out deposit_000M.zkey --name "Alice" --transcript transcript.json [--entropy text]
  beacon     --ptau pot.ptau --in last.zkey --out deposit_final.zkey --beacon <hex> [--iterations 10] [--name beacon] --transcript transcript.json
  verify     --ptau pot.ptau --zkey file.zkey --transcript transcript.json [--final]
  finalize   --ptau pot.ptau --zkey deposit_final.zkey --transcript transcript.json [--init deposit_0000.zkey] [--out-dir circuits/build] [--soroban-params path]
             (--soroban-params default contracts/soroban/shared/src/params.rs)
every verb but phase1 takes --r1cs (default circuits/build/deposit.r1cs); contribute, beacon and finalize take --init deposit_0000.zkey
(the init step's output, pinned by the transcript) to verify from it instead of from the r1cs (faster); verify always uses the
r1cs, and finalize does unless given --init, which is for right after a verify --final of the same zkey.
every verb refuses a contribution that does not change the key (x = 1); beacon, verify --final and finalize need at least
CEREMONY_MIN_CONTRIBUTORS (environment, default 2) distinct contributors before the beacon`;

class UsageError extends Error {}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    r1cs: { type: 'string', default: artifacts.r1cs },
    ptau: { type: 'string' },
    'ptau-sha256': { type: 'string' },
    'ptau-source': { type: 'string' },
    in: { type: 'string' },
    init: { type: 'string' },
    out: { type: 'string' },
    zkey: { type: 'string' },
    transcript: { type: 'string' },
    name: { type: 'string' },
    entropy: { type: 'string' },
    beacon: { type: 'string' },
    iterations: { type: 'string', default: '10' },
    power: { type: 'string' },
    contributors: { type: 'string' },
    final: { type: 'boolean', default: false },
    'out-dir': { type: 'string' },
    'soroban-params': { type: 'string' },
  },
});

function need(key: keyof typeof values): string {
  const value = values[key];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${key} is required`);
  return value;
}

async function run(verb: string | undefined): Promise<void> {
  const r1cs = values.r1cs!;
  const minContributors = minContributorsFrom(process.env);
  switch (verb) {
    case 'phase1': {
      const result = await phase1({ power: Number(need('power')), out: need('out'), contributors: need('contributors').split(','), beaconHash: need('beacon') });
      for (const c of result.contributions) console.log(`${c.name}: ${c.hash}`);
      console.log(`phase-1 file ${values.out}: sha256 ${result.sha256}`);
      return;
    }
    case 'init': {
      const transcript = await init({ r1cs, ptau: need('ptau'), ptauSha256: need('ptau-sha256'), ptauSource: values['ptau-source'], out: need('out'), transcript: need('transcript') });
      console.log(`phase 2 started: ${values.out} (sha256 ${transcript.entries[0]!.newSha256}); pass it and ${values.transcript} to the first contributor`);
      return;
    }
    case 'contribute': {
      const entry = await contribute({ r1cs, ptau: need('ptau'), init: values.init, in: need('in'), out: need('out'), transcript: need('transcript'), name: need('name'), entropy: values.entropy });
      console.log(`contribution by ${entry.name}: ${entry.contributionHash}\nwrote ${values.out} (sha256 ${entry.newSha256}); publish the contribution hash`);
      return;
    }
    case 'beacon': {
      const entry = await beacon({ r1cs, ptau: need('ptau'), init: values.init, in: need('in'), out: need('out'), transcript: need('transcript'), name: values.name ?? 'beacon', beaconHash: need('beacon'), iterationsExp: Number(values.iterations), minContributors });
      console.log(`beacon applied: ${entry.contributionHash}\nwrote ${values.out} (sha256 ${entry.newSha256})`);
      return;
    }
    case 'verify': {
      const transcript = await readTranscript(need('transcript'));
      const recorded = await verifyCeremony({ r1cs, ptau: need('ptau'), zkey: need('zkey'), transcript, requireBeacon: values.final, minContributors });
      for (const c of recorded) console.log(`${c.beacon ? 'beacon' : 'contribution'} ${c.name}: ${c.hash}`);
      console.log(`ceremony verifies: ${recorded.length} contributions, hash chain from phase 1 ${transcript.phase1.sha256} to ${values.zkey}`);
      return;
    }
    case 'finalize': {
      const { manifest, files } = await finalize({ r1cs, ptau: need('ptau'), init: values.init, zkey: need('zkey'), transcript: need('transcript'), outDir: values['out-dir'], sorobanParams: values['soroban-params'], minContributors });
      console.log(`finalized: ${Object.values(files).join(', ')}\nverification key sha256 (PROVING_KEY_VK_SHA256): ${manifest.ceremony.vkSha256}`);
      return;
    }
    default:
      throw new UsageError(verb ? `unknown verb ${verb}` : 'a verb is required');
  }
}

let code = 0;
try {
  await run(positionals[0]);
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`${error.message}\n${USAGE}`);
    code = 2;
  } else if (error instanceof CeremonyError) {
    console.error(`refused: ${error.message}`);
    code = 1;
  } else {
    console.error(error);
    code = 1;
  }
} finally {
  // snarkjs's curve owns worker threads: without this the process never exits.
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
}
process.exit(code);
