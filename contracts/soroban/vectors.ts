import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Asset, Keypair, hash as stellarHash } from '@stellar/stellar-sdk';
import type { Knex } from 'knex';
import { computeOrderHash, encodeOrderParams, type OrderParams } from '../../chains/order.ts';
import type { ActionFields, ActionName } from '../../chains/request-schema.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { createRelayerSigners, type RelayerSigners } from '../../chains/signers.ts';
import { HTLC_LIMITS, computeOrderTimes } from '../../chains/timing.ts';
import { leafOf, nullifierHashOf, secretCommitment } from '../../prover/commitments.ts';
import { FIELD_MODULUS } from '../../prover/field.ts';
import { MerkleTreeStore, type TreeKey } from '../../prover/merkle/store.ts';
import { buildProofInput, type CircuitInput } from '../../prover/proof-input.ts';
import { encodeProof, type Groth16Proof } from '../../prover/solidity.ts';
import { anvilAccounts } from '../../devnet/accounts.ts';

/**
 * Test vectors for the Soroban contracts (contracts/soroban/tests), made by the service's own code:
 * signed call data from chains/ (`buildSignedCallData`, Stellar layout, fixed keys, fixed
 * authTokens and a fixed clock, so every signature is reproducible: ed25519 is deterministic),
 * order hashes from chains/order.ts, deposit trees built by prover/merkle's MerkleTreeStore in
 * PostgreSQL, and Groth16 proofs from the prover's circuit. Two trades:
 *   - `adManager`: ad chain Stellar (148), order chain EVM devnet A (31337): create, fund,
 *     withdraw, lock, unlock with a proof against the EVM portal's tree, close;
 *   - `orderPortal`: order chain Stellar (148), ad chain EVM devnet B (31338): four deposits
 *     into the Soroban portal (roots after each, from MerkleTreeStore) and the unlock of one.
 * Everything but the proofs is deterministic; vectors.test.ts regenerates it and compares.
 *
 * Run: `npx tsx tools/soroban-vectors.ts` (embedded PostgreSQL, or DATABASE_URL) writes vectors.json
 * (the database set-up lives there: deploy/ imports no db/ module, .dependency-cruiser.cjs).
 */

/** Path of the committed vectors file the Rust tests read. */
export const VECTORS_JSON = join(dirname(fileURLToPath(import.meta.url)), 'vectors.json');

export const PASSPHRASE = 'Test SDF Network ; September 2015';
export const STELLAR_CHAIN_ID = '148';
/** Ledger time the Rust tests run at; every request's deadline is this + TTL. */
export const LEDGER_TIMESTAMP = 1_800_000_000;
const TTL = 600;
const DOMAIN = { name: 'ProofBridge', version: '1' };
/** The demo registry's Stellar AdManager and OrderPortal ids (devnet/registry.json). */
const AD_MANAGER = 'CAAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQC526';
const ORDER_PORTAL = 'CABAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAFNSZ';
/** Devnet A/B contracts (same addresses on both chains, devnet/README.md). */
const EVM = {
  adManager: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
  orderPortal: '0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9',
  token: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
};

/** Every order's lockExpiry and refundTime: the service's default times for an order created at LEDGER_TIMESTAMP. */
const TIMES = computeOrderTimes(LEDGER_TIMESTAMP);

/** Long enough for an unlock request to outlive the order's refundTime (the boundary tests). */
const LATE_TTL = 13 * 3_600;
const { minUnlockWindowSeconds: WINDOW, minRefundMarginSeconds: MARGIN, maxOrderLifetimeSeconds: LIFETIME } = HTLC_LIMITS;
/** lockExpiry and refundTime at the contracts' limits exactly, at LEDGER_TIMESTAMP. */
const EDGE_TIMES = { lockExpiry: String(LEDGER_TIMESTAMP + WINDOW), refundTime: String(LEDGER_TIMESTAMP + WINDOW + MARGIN) };
/** Times one second past each limit (contract error InvalidTimes). */
const TIMES_REFUSED: Array<{ why: string; changes: Partial<OrderParams> }> = [
  {
    why: 'InvalidTimes: lockExpiry leaves less than the unlock window',
    changes: {
      lockExpiry: String(LEDGER_TIMESTAMP + WINDOW - 1),
      refundTime: String(LEDGER_TIMESTAMP + WINDOW - 1 + MARGIN),
    },
  },
  { why: 'InvalidTimes: refundTime less than the margin after lockExpiry', changes: { refundTime: String(Number(TIMES.lockExpiry) + MARGIN - 1) } },
  {
    why: 'InvalidTimes: refundTime beyond the order lifetime',
    changes: {
      lockExpiry: String(LEDGER_TIMESTAMP + LIFETIME - MARGIN),
      refundTime: String(LEDGER_TIMESTAMP + LIFETIME + 1),
    },
  },
];
const refusals = (times: typeof TIMES_REFUSED, ...more: Array<{ why: string } & Partial<OrderParams>>) => [
  ...more.map(({ why, ...changes }) => ({ why, changes })),
  ...times,
];

const label = (text: string) => createHash('sha256').update(`relayer-soroban vectors: ${text}`).digest();
const keypair = (name: string) => Keypair.fromRawEd25519Seed(label(name));
const token32 = (name: string) => `0x${label(`authToken ${name}`).toString('hex')}`;
const fieldOf = (name: string) => BigInt(`0x${label(name).toString('hex')}`) % FIELD_MODULUS;
const uuidOf = (name: string) => {
  const h = label(name).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/** A proof as the vectors carry it: the unlock's `proof` bytes and the public signals. */
export interface VectorProof {
  /** prover/solidity.ts `encodeProof`: pA ‖ pB ‖ pC, 256 bytes, 0x hex. */
  proof: string;
  /** [root, orderHashHi, orderHashLo, nullifierHash], decimal. */
  publicSignals: string[];
}

/** Turns a circuit input into a proof; `null` leaves proofs out (the deterministic part only). */
export type Prove = ((input: CircuitInput) => Promise<{ proof: Groth16Proof; publicSignals: string[] }>) | null;

interface OrderVector {
  params: OrderParams;
  /** The Order struct's words: bytes32 as 0x hex, integers as decimal strings. */
  words: Record<string, string>;
  hash: string;
}

/** `amount` and `orderAmount`: the deposit, under both its names. */
const depositOf = (amount: string) => ({ amount, orderAmount: amount });

function orderVector(params: OrderParams): OrderVector {
  const words = Object.fromEntries(Object.entries(encodeOrderParams(params)).map(([k, v]) => [k, String(v)]));
  return { params, words, hash: computeOrderHash(params, DOMAIN) };
}

/** Every value the vectors hold, as JSON. */
export type Vectors = Awaited<ReturnType<typeof buildVectors>>;

/**
 * Builds the vectors with `knex` (a migrated, empty database: the trees start empty) and
 * `prove` (null: proofs left out).
 */
export async function buildVectors(knex: Knex, prove: Prove) {
  const relayer = keypair('relayer');
  const impostor = keypair('impostor');
  const issuer = keypair('issuer');
  const maker = keypair('maker');
  const bridger = keypair('bridger');
  const [, evmMaker, evmBridger] = anvilAccounts(3);
  const token = new Asset('TUSD', issuer.publicKey()).contractId(PASSPHRASE);
  const signersOf = (key: Keypair): RelayerSigners =>
    createRelayerSigners({ relayerEvmPrivateKey: `0x${label('evm relayer').toString('hex')}`, relayerStellarSecret: key.secret() }, DOMAIN);
  const signers = signersOf(relayer);

  const sign = <A extends ActionName>(contract: string, action: A, fields: ActionFields<A>, name: string, by = signers, ttlSeconds = TTL) =>
    buildSignedCallData({
      target: { kind: 'STELLAR', chainId: STELLAR_CHAIN_ID, contractAddress: contract, networkPassphrase: PASSPHRASE },
      action,
      fields,
      signers: by,
      ttlSeconds,
      now: LEDGER_TIMESTAMP * 1000,
      authToken: token32(name),
    });

  const store = new MerkleTreeStore(knex);
  const proofOf = async (key: TreeKey, index: number, secret: bigint, orderHash: string): Promise<VectorProof | null> => {
    if (!prove) return null;
    const path = await store.getPath(key, index);
    const { proof, publicSignals } = await prove(buildProofInput({ secret, orderHash, path }));
    return { proof: encodeProof(proof), publicSignals };
  };

  // Trade 1: the ad on Stellar, the deposit on EVM devnet A, mirrored into the prover's tree.
  const adId = uuidOf('ad');
  // The EVM TUSD has 6 decimals, the Stellar TUSD 7: the ad side moves ten times the deposit's base units.
  const tradeOrder = (salt: string, adAmount: string, changes: Partial<OrderParams> = {}) =>
    orderVector({
      orderChainToken: EVM.token, adChainToken: token, ...depositOf(
        String(BigInt(adAmount) / 10n),
      ), adAmount, bridger: evmBridger!.address, orderRecipient: evmMaker!.address,
      adId, adCreator: maker.publicKey(), adRecipient: bridger.publicKey(), salt, orderChainId: '31337',
      orderPortal: EVM.orderPortal, adChainId: STELLAR_CHAIN_ID, adManager: AD_MANAGER, ...TIMES, ...changes,
    });
  const order = tradeOrder(fieldOf('ad order salt').toString(), '250000');
  const secondOrder = tradeOrder(fieldOf('second ad order salt').toString(), '100000');
  const adSecret = fieldOf('ad order secret');
  // The EVM portal's deposits: two other orders of the same Bridger, then ours (cross-chain.test.ts
  // makes exactly these on devnet A, so the portal there reaches the same root).
  const evmKey: TreeKey = { chainId: '31337', portalAddress: EVM.orderPortal };
  const orderChainDeposits = [];
  for (const [index, deposit] of [
    tradeOrder(fieldOf('evm deposit salt 0').toString(), '10'),
    tradeOrder(fieldOf('evm deposit salt 1').toString(), '20'),
    order,
  ].entries()) {
    const commitment = index === 2 ? secretCommitment(adSecret) : secretCommitment(fieldOf(`evm deposit secret ${index}`));
    const leaf = leafOf(deposit.hash, commitment);
    const state = await store.insertLeaf(evmKey, index, leaf);
    orderChainDeposits.push({ order: deposit, secretCommitment: commitment.toString(), leafIndex: index, leaf: leaf.toString(), root: state.root.toString() });
  }
  const evmRoot = (await store.getState(evmKey)).root;
  const adNullifier = nullifierHashOf(adSecret);
  const adUnlockFields = { orderHash: order.hash, nullifierHash: adNullifier, targetRoot: evmRoot };

  const adManager = {
    adId,
    order,
    secondOrder,
    /** The order chain's (EVM devnet A) deposits, ours last, with MerkleTreeStore's root after each. */
    orderChainDeposits,
    nullifierHash: adNullifier.toString(),
    targetRoot: evmRoot.toString(),
    proof: await proofOf(evmKey, 2, adSecret, order.hash),
    createAd: await sign(
      AD_MANAGER,
      'createAd',
      {
        adId,
        adCreator: maker.publicKey(),
        adToken: token,
        initialAmount: '1000000',
        orderChainId: '31337',
        adRecipient: evmMaker!.address,
      },
      'createAd',
    ),
    fundAd: await sign(AD_MANAGER, 'fundAd', { adId, amount: '500000' }, 'fundAd'),
    fundAdWrongSigner: await sign(AD_MANAGER, 'fundAd', { adId, amount: '500000' }, 'fundAd by impostor', signersOf(impostor)),
    withdrawFromAd: await sign(AD_MANAGER, 'withdrawFromAd', { adId, amount: '200000', to: maker.publicKey() }, 'withdrawFromAd'),
    lockForOrder: await sign(AD_MANAGER, 'lockForOrder', { orderHash: order.hash }, 'lockForOrder'),
    lockSecondOrder: await sign(AD_MANAGER, 'lockForOrder', { orderHash: secondOrder.hash }, 'lockForOrder second'),
    unlock: await sign(AD_MANAGER, 'unlock', adUnlockFields, 'unlock'),
    /** The second order unlocked with the first one's nullifier (and proof): the nullifier is spent. */
    unlockSecondOrderSpentNullifier: await sign(AD_MANAGER, 'unlock', { ...adUnlockFields, orderHash: secondOrder.hash }, 'unlock second'),
    closeAd: await sign(AD_MANAGER, 'closeAd', { adId, to: maker.publicKey() }, 'closeAd'),
    /** The unlock valid past the order's lockExpiry, so the contract's time rule decides at the boundary. */
    unlockLate: await sign(AD_MANAGER, 'unlock', adUnlockFields, 'unlock late', signers, LATE_TTL),
    /** Orders the AdManager must refuse to lock, each with a signed lock request. */
    lockRefused: await Promise.all(refusals(
      TIMES_REFUSED,
      { orderRecipient: evmBridger!.address, why: 'OrderMismatch: pays another recipient than the ad records' },
    )
      .map(async ({ why, changes }, i) => {
        const refused = tradeOrder(fieldOf(`refused lock salt ${i}`).toString(), '1000', changes);
        return { why, order: refused, lockForOrder: await sign(AD_MANAGER, 'lockForOrder', { orderHash: refused.hash }, `lock refused ${i}`) };
      })),
    /** An order at every limit exactly (the least unlock window and refund margin): accepted. */
    edge: await (async () => {
      const edge = tradeOrder(fieldOf('edge lock salt').toString(), '1000', EDGE_TIMES);
      return { order: edge, lockForOrder: await sign(AD_MANAGER, 'lockForOrder', { orderHash: edge.hash }, 'lock edge') };
    })(),
  };

  // Trade 2: the deposit on Stellar (with three other deposits around it), the ad on EVM devnet B.
  const stellarKey: TreeKey = { chainId: STELLAR_CHAIN_ID, portalAddress: ORDER_PORTAL };
  const ours = 2;
  const deposits = [];
  const depositOrder = (i: number, salt: string, changes: Partial<OrderParams> = {}) =>
    orderVector({
      orderChainToken: token,
      adChainToken: EVM.token,
      ...depositOf(String(100_000 * (i + 1))),
      adAmount: String(10_000 * (i + 1)),
      bridger: bridger.publicKey(),
      orderRecipient: maker.publicKey(), adId: uuidOf(`evm ad ${i}`), adCreator: evmMaker!.address, adRecipient: evmBridger!.address,
      salt, orderChainId: STELLAR_CHAIN_ID, orderPortal: ORDER_PORTAL, adChainId: '31338', adManager: EVM.adManager, ...TIMES, ...changes,
    });
  for (let i = 0; i < 4; i++) {
    const secret = fieldOf(`deposit secret ${i}`);
    const deposit = depositOrder(i, fieldOf(`deposit salt ${i}`).toString());
    const commitment = secretCommitment(secret);
    const leaf = leafOf(deposit.hash, commitment);
    const state = await store.insertLeaf(stellarKey, i, leaf);
    deposits.push({
      order: deposit,
      secretCommitment: commitment.toString(),
      nullifierHash: nullifierHashOf(secret).toString(),
      createOrder: await sign(ORDER_PORTAL, 'createOrder', { orderHash: deposit.hash, secretCommitment: commitment }, `createOrder ${i}`),
      leafIndex: i,
      leaf: leaf.toString(),
      root: state.root.toString(),
      secret,
    });
  }
  const root = deposits[deposits.length - 1]!.root;
  const our = deposits[ours]!;
  const portalUnlockFields = { orderHash: our.order.hash, nullifierHash: our.nullifierHash, targetRoot: root };
  const orderPortal = {
    ours,
    deposits: deposits.map(({ secret: _secret, ...rest }) => rest),
    targetRoot: root,
    proof: await proofOf(stellarKey, ours, our.secret, our.order.hash),
    unlock: await sign(ORDER_PORTAL, 'unlock', portalUnlockFields, 'portal unlock'),
    /** Signed by the relayer, but against a root the portal never had. */
    unlockUnknownRoot: await sign(ORDER_PORTAL, 'unlock', { ...portalUnlockFields, targetRoot: '12345' }, 'portal unlock unknown root'),
    /** Deposit 0 unlocked with our nullifier, root and proof: the nullifier is spent. */
    unlockSpentNullifier: await sign(ORDER_PORTAL, 'unlock', { ...portalUnlockFields, orderHash: deposits[0]!.order.hash }, 'portal unlock spent'),
    /** The unlock valid past the order's refundTime, so the contract's time rule decides at the boundary. */
    unlockLate: await sign(ORDER_PORTAL, 'unlock', portalUnlockFields, 'portal unlock late', signers, LATE_TTL),
    /** Orders whose times the OrderPortal must refuse at createOrder, each with a signed request. */
    createRefused: await Promise.all(refusals(TIMES_REFUSED).map(async ({ why, changes }, i) => {
      const refused = depositOrder(0, fieldOf(`refused deposit salt ${i}`).toString(), changes);
      const commitment = secretCommitment(fieldOf(`refused deposit secret ${i}`));
      return {
        why,
        order: refused,
        secretCommitment: commitment.toString(),
        createOrder: await sign(
          ORDER_PORTAL,
          'createOrder',
          { orderHash: refused.hash, secretCommitment: commitment },
          `create refused ${i}`,
        ),
      };
    })),
    /** A deposit at every limit exactly: accepted. */
    edge: await (async () => {
      const edge = depositOrder(0, fieldOf('edge deposit salt').toString(), EDGE_TIMES);
      const commitment = secretCommitment(fieldOf('edge deposit secret'));
      return {
        order: edge,
        secretCommitment: commitment.toString(),
        createOrder: await sign(
          ORDER_PORTAL,
          'createOrder',
          { orderHash: edge.hash, secretCommitment: commitment },
          'create edge',
        ),
      };
    })(),
  };

  return {
    generatedBy: 'contracts/soroban/vectors.ts',
    network: {
      passphrase: PASSPHRASE,
      networkId: `0x${stellarHash(Buffer.from(PASSPHRASE)).toString('hex')}`,
      chainId: STELLAR_CHAIN_ID,
      ledgerTimestamp: LEDGER_TIMESTAMP,
      domain: DOMAIN,
    },
    relayer: { publicKey: relayer.publicKey(), key: `0x${relayer.rawPublicKey().toString('hex')}` },
    accounts: { issuer: issuer.publicKey(), maker: maker.publicKey(), bridger: bridger.publicKey() },
    contracts: { adManager: AD_MANAGER, orderPortal: ORDER_PORTAL, token, tokenAsset: { code: 'TUSD', issuer: issuer.publicKey() } },
    adManager,
    orderPortal,
  };
}

/** The vectors without the proofs (a Groth16 proof is randomised; everything else is not). */
export function deterministicPart(vectors: Vectors): unknown {
  return JSON.parse(JSON.stringify(vectors, (key, value) => (key === 'proof' ? null : value)));
}
