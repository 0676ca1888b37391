import { createHash } from 'node:crypto';
import { Keypair } from '@stellar/stellar-sdk';
import { anvilAccounts, type DevAccount } from '../devnet/accounts.ts';

// Only production dependencies here (ethers, the Stellar SDK): the start-up summary reads these in
// any process, while the devnet's own packages (anvil, solc) are absent from the production image.

/** DEVNET ONLY: the EVM account the start-up summary hands a person, anvil's account 1 (account 0 deploys the contracts). */
export const EVM_DEV_ACCOUNT: DevAccount = anvilAccounts(2)[1]!;

/**
 * DEVNET ONLY: the Stellar account the start-up summary hands a person, as anvil's account 1 is on
 * the EVM chains. Derived from a public phrase (like the contracts' deployer), so it is the same on
 * every run; `startLocalDevnet` funds it.
 */
export const STELLAR_DEV_ACCOUNT = Keypair.fromRawEd25519Seed(createHash('sha256').update('relayer stellar devnet user').digest());
