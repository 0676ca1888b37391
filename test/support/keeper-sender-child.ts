// A keeper sender in a process of its own, for tests that kill it mid-send: it passes over the
// account's outbox until killed. Settings come from its (allow-listed) environment.
import { randomBytes } from 'node:crypto';
import { Keypair } from '@stellar/stellar-sdk';
import { SigningKey } from 'ethers';
import { createEnvSigner } from '../../chains/signers.ts';
import { createKnex } from '../../db/knex.ts';
import { createEvmKeeperSender } from '../../keeper/evm/sender.ts';
import { createKeeperEvmRpc } from '../../keeper/evm/rpc.ts';
import { createStellarKeeperSender } from '../../keeper/stellar/sender.ts';
import { createKeeperStellarRpc } from '../../keeper/stellar/rpc.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const knex = createKnex(env('KEEPER_CHILD_DATABASE_URL'), 2);
const leaseSeconds = Number(env('KEEPER_CHILD_LEASE_SECONDS'));
// KEEPER_CHILD_STELLAR_SECRET set: the Stellar sender (with KEEPER_CHILD_PASSPHRASE); else the EVM one.
const sender = process.env.KEEPER_CHILD_STELLAR_SECRET
  ? createStellarKeeperSender({
    knex,
    rpc: createKeeperStellarRpc([env('KEEPER_CHILD_RPC_URL')]),
    signer: createEnvSigner(new SigningKey(`0x${randomBytes(32).toString('hex')}`), Keypair.fromSecret(env('KEEPER_CHILD_STELLAR_SECRET'))),
    chain: { chainId: env('KEEPER_CHILD_CHAIN_ID'), confirmations: 1, networkPassphrase: env('KEEPER_CHILD_PASSPHRASE') },
    settings: { replaceAfterSeconds: 3_600, maxFeeStroops: 10_000_000, leaseSeconds },
    owner: 'child',
  })
  : createEvmKeeperSender({
    knex,
    rpc: createKeeperEvmRpc([env('KEEPER_CHILD_RPC_URL')]),
    signer: createEnvSigner(new SigningKey(env('KEEPER_CHILD_EVM_KEY')), Keypair.random()),
    chain: { chainId: env('KEEPER_CHILD_CHAIN_ID'), confirmations: 1 },
    settings: { replaceAfterSeconds: 3_600, maxFeeGwei: 500, leaseSeconds },
    owner: 'child',
  });
for (;;) {
  const pass = await sender.pass();
  process.stdout.write(`${JSON.stringify(pass)}\n`);
  await new Promise((resolve) => setTimeout(resolve, 100));
}
