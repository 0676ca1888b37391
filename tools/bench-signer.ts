/**
 * `npm run bench:signer [-- --count 200]`: the relayer's signing latency through a PKCS#11 token
 * (SoftHSM2, through relayer-pkcs11-signer) against the in-memory key, measured in one run, paired:
 * each round signs the same fresh digest with both signers, in alternating order, so drift on a
 * shared machine hits both alike. Prints the median, p95 and mean per signature for secp256k1
 * (EVM) and Ed25519 (Stellar), sequential (one request at a time, as one API request signs).
 * Installs SoftHSM2 and builds the signer when missing, as the test setup does.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Keypair } from '@stellar/stellar-sdk';
import { SigningKey, Wallet, recoverAddress } from 'ethers';
import { buildPkcs11Signer } from '../chains/signer/build.ts';
import { createPkcs11Signer } from '../chains/signer/pkcs11.ts';
import { createEnvSigner, type RelayerSigner } from '../chains/signers.ts';
import { createSoftHsmToken } from '../test/support/softhsm.ts';

const { values } = parseArgs({ options: { count: { type: 'string', default: '200' } } });
const count = Number(values.count);

const module = execFileSync(process.execPath, [new URL('../scripts/install-softhsm.mjs', import.meta.url).pathname], { encoding: 'utf8' }).trim().split('\n').pop()!;
buildPkcs11Signer({ quiet: true });
const token = createSoftHsmToken(module, 'bench');
const hsm = createPkcs11Signer({
  module, tokenLabel: 'bench', pinFile: token.env.PKCS11_PIN_FILE!, evmKeyLabel: token.env.PKCS11_EVM_KEY_LABEL!, stellarKeyLabel: token.env.PKCS11_STELLAR_KEY_LABEL!,
});
const memory = createEnvSigner(new SigningKey(Wallet.createRandom().privateKey), Keypair.random());

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return `median ${at(0.5).toFixed(3)} ms, p95 ${at(0.95).toFixed(3)} ms, mean ${mean.toFixed(3)} ms`;
}

async function paired(name: string, sign: (signer: RelayerSigner, message: Buffer) => Promise<unknown>): Promise<void> {
  const times = { hsm: [] as number[], memory: [] as number[] };
  for (let i = 0; i < count; i++) {
    const message = randomBytes(32);
    const order: ['hsm' | 'memory', RelayerSigner][] = [['hsm', hsm], ['memory', memory]];
    if (i % 2 === 1) order.reverse();
    for (const [which, signer] of order) times[which].push(await timed(() => sign(signer, message)));
  }
  const ratio = summaryMedian(times.hsm) / summaryMedian(times.memory);
  console.log(`${name} (${count} paired signatures)\n  HSM (SoftHSM2 via PKCS#11): ${summary(times.hsm)}\n  in-memory key:              ${summary(times.memory)}\n  median ratio HSM / memory: ${ratio.toFixed(1)}x`);
}

function summaryMedian(samples: number[]): number {
  return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}

try {
  // Warm both (the child process starts, the keys are found, the addresses read) before timing.
  const address = await hsm.evmAddress();
  await hsm.stellarPublicKey();
  const check = `0x${randomBytes(32).toString('hex')}`;
  if (recoverAddress(check, await hsm.signEvmDigest(check)) !== address) throw new Error('the HSM signature does not recover to its address');
  await memory.signEvmDigest(check);
  await paired('secp256k1 / EVM (signEvmDigest: CKM_ECDSA, low-s, recovery id)', (signer, message) => signer.signEvmDigest(`0x${message.toString('hex')}`));
  await paired('Ed25519 / Stellar (signStellar: CKM_EDDSA)', (signer, message) => signer.signStellar(message));
} finally {
  await hsm.close();
  token.remove();
}
