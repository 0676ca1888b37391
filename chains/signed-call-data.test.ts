import { createHash } from 'node:crypto';
import { Keypair, StrKey } from '@stellar/stellar-sdk';
import { TypedDataEncoder, Wallet, recoverAddress } from 'ethers';
import { describe, expect, it } from 'vitest';
import { computeOrderHash, type OrderParams } from './order.ts';
import { RequestFieldError, structFields } from './request-schema.ts';
import { stellarRequestMessage } from './stellar/request-layout.ts';
import { buildSignedCallData, CallTargetError } from './signed-call-data.ts';
import { createRelayerSigners, createRotatingSigner } from './signers.ts';

const evmWallet = Wallet.createRandom();
const stellarKey = Keypair.random();
const signers = createRelayerSigners(
  { relayerEvmPrivateKey: evmWallet.privateKey, relayerStellarSecret: stellarKey.secret() },
  { name: 'ProofBridge', version: '1' },
);
const adManager = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const stellarContract = StrKey.encodeContract(Buffer.alloc(32, 7));
const adId = '0f8fad5b-d9cb-469f-a165-70867728950e';
const NOW = 1_700_000_000_000;

describe('buildSignedCallData on EVM', () => {
  const build = () =>
    buildSignedCallData({
      target: { kind: 'EVM', chainId: '31337', contractAddress: adManager },
      action: 'fundAd',
      fields: { adId, amount: 1_000n },
      signers,
      ttlSeconds: 600,
      now: NOW,
    });

  it('returns the shared shape plus the action fields, with timeToExpire in seconds', async () => {
    const data = await build();
    expect(Object.keys(data).sort()).toEqual(
      ['adId', 'amount', 'authToken', 'chainId', 'chainKind', 'contractAddress', 'deadline', 'reqHash', 'signature', 'timeToExpire'].sort(),
    );
    expect(data).toMatchObject({ chainId: '31337', chainKind: 'EVM', contractAddress: adManager, timeToExpire: 600, amount: '1000', adId });
    expect(data.deadline).toBe(String(NOW / 1000 + 600));
    expect(data.authToken).toMatch(/^0x[0-9a-f]{64}$/);
    expect(data.signature).toMatch(/^0x[0-9a-f]{130}$/);
  });

  it('signs the EIP-712 digest ethers computes from hand-written types, recoverable to the relayer', async () => {
    const data = await build();
    const digest = TypedDataEncoder.hash(
      { name: 'ProofBridge', version: '1', chainId: 31337, verifyingContract: adManager },
      {
        FundAd: [
          { name: 'authToken', type: 'bytes32' },
          { name: 'deadline', type: 'uint256' },
          { name: 'adId', type: 'bytes32' },
          { name: 'amount', type: 'uint256' },
        ],
      },
      { authToken: data.authToken, deadline: data.deadline, adId: '0x000000000000000000000000000000000f8fad5bd9cb469fa16570867728950e', amount: 1000 },
    );
    expect(data.reqHash).toBe(digest);
    expect(recoverAddress(digest, data.signature)).toBe(evmWallet.address);
  });

  it('draws a fresh authToken for every request', async () => {
    expect((await build()).authToken).not.toBe((await build()).authToken);
  });

  it('uses a given authToken (pinned vectors) and refuses a malformed one', async () => {
    const authToken = `0x${'ab'.repeat(32)}`;
    const pinned = () =>
      buildSignedCallData({ target: { kind: 'EVM', chainId: '31337', contractAddress: adManager }, action: 'fundAd', fields: { adId, amount: 1_000n }, signers, ttlSeconds: 600, now: NOW, authToken });
    expect((await pinned()).authToken).toBe(authToken);
    expect((await pinned()).reqHash).toBe((await pinned()).reqHash);
    await expect(
      buildSignedCallData({ target: { kind: 'EVM', chainId: '31337', contractAddress: adManager }, action: 'fundAd', fields: { adId, amount: 1_000n }, signers, ttlSeconds: 600, authToken: '0x12' }),
    ).rejects.toThrow(/authToken must be 0x and 64 lower-case hex digits, received '0x12'/);
  });

  it('keeps a given authToken when the fields carry another', async () => {
    const authToken = `0x${'ab'.repeat(32)}`;
    const data = await buildSignedCallData({
      target: { kind: 'EVM', chainId: '31337', contractAddress: adManager },
      action: 'fundAd',
      fields: { adId, amount: 1_000n, authToken: `0x${'ee'.repeat(32)}`, deadline: '99999999999' } as never,
      signers,
      ttlSeconds: 600,
      now: NOW,
      authToken,
    });
    expect(data.authToken).toBe(authToken);
    expect(data.deadline).toBe(String(NOW / 1000 + 600));
  });

  it('signs and returns its own authToken and deadline even when the fields carry others', async () => {
    const callerToken = `0x${'ee'.repeat(32)}`;
    const data = await buildSignedCallData({
      target: { kind: 'EVM', chainId: '31337', contractAddress: adManager },
      action: 'fundAd',
      fields: { adId, amount: 1_000n, authToken: callerToken, deadline: '99999999999' } as never,
      signers,
      ttlSeconds: 600,
      now: NOW,
    });
    expect(data.deadline).toBe(String(NOW / 1000 + 600));
    expect(data.authToken).not.toBe(callerToken);
    const digest = TypedDataEncoder.hash(
      { name: 'ProofBridge', version: '1', chainId: 31337, verifyingContract: adManager },
      { FundAd: ['authToken:bytes32', 'deadline:uint256', 'adId:bytes32', 'amount:uint256'].map((e) => ({ name: e.split(':')[0]!, type: e.split(':')[1]! })) },
      { authToken: data.authToken, deadline: NOW / 1000 + 600, adId: `0x${'0'.repeat(32)}${adId.replaceAll('-', '')}`, amount: 1000 },
    );
    expect(data.reqHash).toBe(digest);
  });

  it('still rejects a field the action does not declare', async () => {
    await expect(
      buildSignedCallData({
        target: { kind: 'EVM', chainId: '31337', contractAddress: adManager },
        action: 'fundAd',
        fields: { adId, amount: 1n, to: adManager } as never,
        signers,
        ttlSeconds: 600,
      }),
    ).rejects.toThrow(new RequestFieldError('unknown fields: to'));
  });

  it('rejects a field that does not fit, naming it', async () => {
    await expect(
      buildSignedCallData({
        target: { kind: 'EVM', chainId: '31337', contractAddress: adManager },
        action: 'withdrawFromAd',
        fields: { adId, amount: '-5', to: adManager },
        signers,
        ttlSeconds: 600,
      }),
    ).rejects.toThrow(new RequestFieldError("amount: expected a non-negative integer as a decimal string (received '-5')"));
  });

  it('rejects a Stellar contract as an EVM target', async () => {
    await expect(
      buildSignedCallData({
        target: { kind: 'EVM', chainId: '31337', contractAddress: stellarContract },
        action: 'closeAd',
        fields: { adId, to: adManager },
        signers,
        ttlSeconds: 600,
      }),
    ).rejects.toThrow(CallTargetError);
  });
});

describe('buildSignedCallData on Stellar', () => {
  const passphrase = 'Test SDF Network ; September 2015';
  const recipient = Keypair.random().publicKey();
  const build = () =>
    buildSignedCallData({
      target: { kind: 'STELLAR', chainId: '148', contractAddress: stellarContract, networkPassphrase: passphrase },
      action: 'withdrawFromAd',
      fields: { adId, amount: '250', to: recipient },
      signers,
      ttlSeconds: 300,
      now: NOW,
    });

  it('signs sha256 of the documented byte layout with the relayer ed25519 key and names the signer', async () => {
    const data = await build();
    const sha = (s: string | Buffer) => createHash('sha256').update(s).digest();
    const word = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
    const message = Buffer.concat([
      sha('ProofBridge'),
      sha('1'),
      sha(passphrase),
      word(148n),
      Buffer.alloc(32, 7),
      sha('WithdrawFromAd(bytes32 authToken,uint256 deadline,bytes32 adId,uint256 amount,bytes32 to)'),
      Buffer.from(data.authToken.slice(2), 'hex'),
      word(BigInt(NOW / 1000 + 300)),
      Buffer.concat([Buffer.alloc(16), Buffer.from(adId.replaceAll('-', ''), 'hex')]),
      word(250n),
      Buffer.from(StrKey.decodeEd25519PublicKey(recipient)),
    ]);
    expect(message).toHaveLength(32 * 11);
    expect(data.reqHash).toBe(`0x${sha(message).toString('hex')}`);
    expect(data.signerPublicKey).toBe(stellarKey.publicKey());
    expect(Keypair.fromPublicKey(data.signerPublicKey!).verify(sha(message), Buffer.from(data.signature.slice(2), 'hex'))).toBe(true);
    expect(data.chainKind).toBe('STELLAR');
  });

  it('signs its own deadline even when the fields carry a later one', async () => {
    const data = await buildSignedCallData({
      target: { kind: 'STELLAR', chainId: '148', contractAddress: stellarContract, networkPassphrase: passphrase },
      action: 'closeAd',
      fields: { adId, to: recipient, deadline: '99999999999' } as never,
      signers,
      ttlSeconds: 300,
      now: NOW,
    });
    expect(data.deadline).toBe(String(NOW / 1000 + 300));
    const honest = stellarRequestMessage(
      { name: 'ProofBridge', version: '1', networkPassphrase: passphrase, chainId: '148', contract: stellarContract },
      'CloseAd',
      structFields('closeAd'),
      { authToken: data.authToken, deadline: data.deadline, adId, to: recipient },
    );
    expect(data.reqHash).toBe(`0x${createHash('sha256').update(honest).digest('hex')}`);
  });

  it('requires the network passphrase', async () => {
    await expect(
      buildSignedCallData({
        target: { kind: 'STELLAR', chainId: '148', contractAddress: stellarContract },
        action: 'closeAd',
        fields: { adId, to: recipient },
        signers,
        ttlSeconds: 300,
      }),
    ).rejects.toThrow(CallTargetError);
  });
});

describe('computeOrderHash', () => {
  const params: OrderParams = {
    orderChainToken: StrKey.encodeContract(Buffer.alloc(32, 1)),
    adChainToken: '0x0000000000000000000000000000000000000000',
    amount: '5000',
    orderAmount: '5000',
    adAmount: '50000',
    bridger: Keypair.random().publicKey(),
    orderRecipient: Keypair.random().publicKey(),
    adId,
    adCreator: evmWallet.address,
    adRecipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    salt: '123456789',
    orderChainId: '148',
    orderPortal: stellarContract,
    adChainId: '31337',
    adManager,
    lockExpiry: '1700021600',
    refundTime: '1700043200',
  };

  it('equals the EIP-712 digest of the Order struct under the {name, version} domain', async () => {
    const pad = (a: string) => `0x${a.slice(2).toLowerCase().padStart(64, '0')}`;
    const raw = (g: string) => `0x${Buffer.from(StrKey.decodeEd25519PublicKey(g)).toString('hex')}`;
    const types = {
      Order: [
        'bytes32 orderChainToken', 'bytes32 adChainToken', 'uint256 orderAmount', 'uint256 adAmount', 'bytes32 bridger', 'bytes32 orderRecipient',
        'bytes32 adId', 'bytes32 adCreator', 'bytes32 adRecipient', 'uint256 salt', 'uint256 orderChainId',
        'bytes32 orderPortal', 'uint256 adChainId', 'bytes32 adManager', 'uint256 lockExpiry', 'uint256 refundTime',
      ].map((entry) => ({ type: entry.split(' ')[0]!, name: entry.split(' ')[1]! })),
    };
    const expected = TypedDataEncoder.hash({ name: 'ProofBridge', version: '1' }, types, {
      orderChainToken: `0x${'01'.repeat(32)}`,
      adChainToken: `0x${'0'.repeat(64)}`,
      orderAmount: 5000,
      adAmount: 50000,
      bridger: raw(params.bridger),
      orderRecipient: raw(params.orderRecipient),
      adId: `0x${'0'.repeat(32)}${adId.replaceAll('-', '')}`,
      adCreator: pad(evmWallet.address),
      adRecipient: pad(params.adRecipient),
      salt: 123456789,
      orderChainId: 148,
      orderPortal: `0x${'07'.repeat(32)}`,
      adChainId: 31337,
      adManager: pad(adManager),
      lockExpiry: 1700021600,
      refundTime: 1700043200,
    });
    expect(computeOrderHash(params, { name: 'ProofBridge', version: '1' })).toBe(expected);
  });

  it('changes when any parameter changes', async () => {
    const base = computeOrderHash(params, { name: 'ProofBridge', version: '1' });
    expect(computeOrderHash({ ...params, adChainId: '31338' }, { name: 'ProofBridge', version: '1' })).not.toBe(base);
    expect(computeOrderHash({ ...params, salt: '123456790' }, { name: 'ProofBridge', version: '1' })).not.toBe(base);
    expect(computeOrderHash({ ...params, lockExpiry: '1700021601' }, { name: 'ProofBridge', version: '1' })).not.toBe(base);
    expect(computeOrderHash({ ...params, refundTime: '1700043201' }, { name: 'ProofBridge', version: '1' })).not.toBe(base);
    // Both amounts are bound: neither chain's contract can be handed the other's number.
    expect(computeOrderHash({ ...params, adAmount: '5000' }, { name: 'ProofBridge', version: '1' })).not.toBe(base);
    expect(computeOrderHash({ ...params, amount: '50000', orderAmount: '50000' }, { name: 'ProofBridge', version: '1' })).not.toBe(base);
  });

  it('refuses an order whose amount (the spec\'s name for the deposit) differs from its orderAmount', async () => {
    expect(() => computeOrderHash({ ...params, amount: '50000' }, { name: 'ProofBridge', version: '1' })).toThrow(/amount: must equal orderAmount/);
  });

  it('refuses, on an order touching Stellar, either amount the Soroban Order cannot hold, naming it', async () => {
    // The order chain is Stellar (params.orderPortal is a contract strkey): its orderAmount must fit an i128.
    expect(() => computeOrderHash({ ...params, amount: String(1n << 127n), orderAmount: String(1n << 127n) }, { name: 'ProofBridge', version: '1' })).toThrow(/orderAmount: must fit a Stellar i128/);
    // The ad side is EVM, but the Soroban OrderPortal's Order holds adAmount as an i128 too: an
    // order it could not take is refused before anything is reserved.
    expect(() => computeOrderHash({ ...params, adAmount: String(1n << 200n) }, { name: 'ProofBridge', version: '1' })).toThrow(/adAmount: must fit a Stellar i128/);
    expect(computeOrderHash({ ...params, adAmount: String((1n << 127n) - 1n) }, { name: 'ProofBridge', version: '1' })).toMatch(/^0x/);
  });

  it('rejects a malformed adId', async () => {
    expect(() => computeOrderHash({ ...params, adId: 'ad-1' }, { name: 'ProofBridge', version: '1' })).toThrow(/adId/);
  });
});

describe('Stellar amounts', () => {
  it('refuses to sign an amount a Soroban token cannot hold', async () => {
    await expect(
      buildSignedCallData({
        target: { kind: 'STELLAR', chainId: '148', contractAddress: stellarContract, networkPassphrase: 'Test SDF Network ; September 2015' },
        action: 'fundAd',
        fields: { adId, amount: 1n << 127n },
        signers,
        ttlSeconds: 300,
      }),
    ).rejects.toThrow(RequestFieldError);
  });
});

describe('buildSignedCallData with a rotating signer (RELAYER_KEY_SWITCH_AT)', () => {
  const next = createRelayerSigners(
    { relayerEvmPrivateKey: Wallet.createRandom().privateKey, relayerStellarSecret: Keypair.random().secret() },
    { name: 'ProofBridge', version: '1' },
  );
  const rotating = { signer: createRotatingSigner(signers.signer, next.signer, NOW + 1_000), domain: signers.domain };
  const build = (kind: 'EVM' | 'STELLAR', now: number) =>
    buildSignedCallData({
      target: kind === 'EVM'
        ? { kind, chainId: '31337', contractAddress: adManager }
        : { kind, chainId: '148', contractAddress: stellarContract, networkPassphrase: 'Standalone Network ; February 2017' },
      action: 'fundAd',
      fields: { adId, amount: 1_000n },
      signers: rotating,
      ttlSeconds: 600,
      now,
    });

  it('signs with the previous keys before the switch and the current ones from it, per request time', async () => {
    const before = await build('EVM', NOW + 999);
    const after = await build('EVM', NOW + 1_000);
    expect(recoverAddress(before.reqHash, before.signature)).toBe(signers.evmAddress);
    expect(recoverAddress(after.reqHash, after.signature)).toBe(next.evmAddress);
  });

  it("names the Stellar key that signed (signerPublicKey) on each side of the switch, so the contract checks the right one", async () => {
    const before = await build('STELLAR', NOW + 999);
    const after = await build('STELLAR', NOW + 1_000);
    expect(before.signerPublicKey).toBe(stellarKey.publicKey());
    expect(after.signerPublicKey).toBe(next.stellar.publicKey());
    const verify = (data: typeof before) =>
      Keypair.fromPublicKey(data.signerPublicKey!).verify(Buffer.from(data.reqHash.slice(2), 'hex'), Buffer.from(data.signature.slice(2), 'hex'));
    expect(verify(before)).toBe(true);
    expect(verify(after)).toBe(true);
  });
});
