import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Account, Address, authorizeEntry, hash, Keypair, StrKey, TransactionBuilder, xdr } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { stellarContractCall } from '../chains/stellar/call-args.ts';
import { isWalletSignature } from '../chains/wallet-signature.ts';
import { freeLoopbackPort } from '../entrypoints/free-port.ts';
import { launchBrowser } from '../test/support/browser.ts';
import { bundleStellarCalls, declareStellarCalls } from './generate.ts';
import { authorizeWithWallet, signUnlockMessage, stellarOperation, unlockMessage, type SignedResponse, type StellarAction } from './stellar.js';

/**
 * `@cross-chain-relayer/client/stellar` is the service's own Soroban call assembly, bundled: the
 * committed bundle is what generation makes, its operations are the service's, its unlock text
 * signature is one the service accepts, and it runs in a real browser (headless Chromium, with
 * stellar-sdk's own browser build and no Node globals) building and signing what Node builds and
 * signs. (test/trades/trades-stellar.test.ts settles a whole trade through it on the Soroban devnet.)
 */

const committed = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');

// Responses a Stellar dApp gets: a Maker's create_ad and a Bridger's order unlock (fields as the API returns them).
const maker = Keypair.fromRawEd25519Seed(Buffer.alloc(32, 3));
const contract = StrKey.encodeContract(Buffer.alloc(32, 9));
const token = StrKey.encodeContract(Buffer.alloc(32, 8));
const signed = { contractAddress: contract, authToken: `0x${'ab'.repeat(32)}`, deadline: '1999999999', signature: `0x${'11'.repeat(64)}`, signerPublicKey: Keypair.fromRawEd25519Seed(Buffer.alloc(32, 5)).publicKey() };
const orderParams = {
  orderChainToken: token, adChainToken: '0x5FbDB2315678afecb367f032d93F642f64180aa3', amount: '100', orderAmount: '100', adAmount: '95',
  bridger: maker.publicKey(), orderRecipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', adId: '0b5c2a6e-8f0e-4f7a-9a51-3c1d2e4f5a6b',
  adCreator: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', adRecipient: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', salt: '12345',
  orderChainId: '148', orderPortal: contract, adChainId: '31338', adManager: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512', lockExpiry: '1900000000', refundTime: '1900086400',
};
const cases: [StellarAction, SignedResponse][] = [
  ['createAd', { ...signed, adId: orderParams.adId, adCreator: maker.publicKey(), adToken: token, initialAmount: '1000', orderChainId: '31338', adRecipient: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' }],
  ['unlock', { ...signed, orderParams, proof: `0x${'22'.repeat(256)}`, nullifierHash: '77', targetRoot: '88' }],
];
const PASSPHRASE = 'Standalone Network ; February 2017';
const ORDER_HASH = `0x${'cd'.repeat(32)}`;

/** What a dApp does with an operation: a transaction from its own account, signed (sequence and time bounds fixed here). */
function signedTransactionXdr(operation: ReturnType<typeof stellarOperation>): string {
  const tx = new TransactionBuilder(new Account(maker.publicKey(), '41'), { fee: '100', networkPassphrase: PASSPHRASE }).addOperation(operation).setTimeout(0).build();
  tx.sign(maker);
  return tx.toXDR();
}

describe('the ./stellar entry of the client package', () => {
  it('carries the Soroban calls bundled from the service\'s own call assembly, with nothing from Node and only @stellar/stellar-sdk outside (else run npm run client:generate)', async () => {
    const bundle = await bundleStellarCalls();
    expect(committed('./stellar.js')).toBe(bundle);
    expect(committed('./stellar.d.ts')).toBe(declareStellarCalls());
    const imported = [...bundle.matchAll(/^import .* from "([^"]+)";$/gm)].map((match) => match[1]);
    expect(new Set(imported)).toEqual(new Set(['@stellar/stellar-sdk']));
    // (`require(` followed by a quote: ethers' error text says "likely require(false)", which is no import.)
    expect(bundle).not.toMatch(/\brequire\(["'`]|["'`]node:|\bBuffer\.|\bprocess\./);
  }, 60_000);

  it('builds the service\'s operations and signs unlocks the way Freighter does, which the service accepts (and not another text)', () => {
    for (const [action, response] of cases) {
      expect(stellarOperation(action, response).toXDR('base64'), action).toBe(stellarContractCall(action, response as never, { orderParams: response.orderParams, proof: response.proof }).toXDR('base64'));
    }
    const signature = signUnlockMessage(maker, ORDER_HASH);
    expect(isWalletSignature('STELLAR', maker.publicKey(), Buffer.from(ORDER_HASH.slice(2), 'hex'), signature)).toBe(true); // as POST /unlock checks it
    expect(signUnlockMessage(maker, ORDER_HASH.toUpperCase().replace('0X', '0x'))).toBe(signature); // the text is the lower-case hash
    expect(() => unlockMessage('0x1234')).toThrow(/not an order hash/);
    expect(() => stellarOperation('unlock', { ...signed, orderParams })).toThrow(/proof/);
  });

  it('authorizeWithWallet: an authorisation entry signed through a wallet\'s signAuthEntry (Freighter\'s form: the preimage XDR in, the signature of its hash out, base64 or bytes) equals stellar-sdk\'s authorizeEntry with the key; another key\'s signature is refused', async () => {
    // The entry a fee-payer transaction's simulation records for the Maker's fund_ad.
    const entry = new xdr.SorobanAuthorizationEntry({
      credentials: xdr.SorobanCredentials.sorobanCredentialsAddress(new xdr.SorobanAddressCredentials({
        address: new Address(maker.publicKey()).toScAddress(), nonce: xdr.Int64.fromString('7'), signatureExpirationLedger: 0, signature: xdr.ScVal.scvVoid(),
      })),
      rootInvocation: new xdr.SorobanAuthorizedInvocation({
        function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(new xdr.InvokeContractArgs({ contractAddress: new Address(contract).toScAddress(), functionName: 'fund_ad', args: [] })),
        subInvocations: [],
      }),
    });
    const asked: { address: string; networkPassphrase: string }[] = [];
    const freighterLike = (key: Keypair, bytes = false) => async (preimageXdr: string, opts: { networkPassphrase: string; address: string }) => {
      asked.push(opts);
      const signature = key.sign(hash(Buffer.from(preimageXdr, 'base64')));
      return bytes ? new Uint8Array(signature) : signature.toString('base64');
    };
    const expected = (await authorizeEntry(entry, maker, 1234, PASSPHRASE)).toXDR('base64');
    expect((await authorizeWithWallet(freighterLike(maker), maker.publicKey(), PASSPHRASE)(entry, 1234)).toXDR('base64')).toBe(expected);
    expect((await authorizeWithWallet(freighterLike(maker, true), maker.publicKey(), PASSPHRASE)(entry, 1234)).toXDR('base64')).toBe(expected);
    expect(asked).toEqual([{ address: maker.publicKey(), networkPassphrase: PASSPHRASE }, { address: maker.publicKey(), networkPassphrase: PASSPHRASE }]);
    await expect(authorizeWithWallet(freighterLike(Keypair.random()), maker.publicKey(), PASSPHRASE)(entry, 1234)).rejects.toThrow(/signature doesn't match payload/);
  });

  it('builds and signs the same transactions in headless Chromium (stellar-sdk\'s browser build, no Buffer or process) as in Node', async () => {
    const inNode = { txs: cases.map(([action, response]) => signedTransactionXdr(stellarOperation(action, response))), unlock: signUnlockMessage(maker, ORDER_HASH) };
    const sdkNames = [...committed('./stellar.js').matchAll(/^import \{([^}]+)\} from "@stellar\/stellar-sdk";$/gm)]
      .flatMap((match) => match[1]!.split(',').map((name) => name.trim().split(/\s+as\s+/)[0]!))
      .concat(['Account', 'Keypair', 'TransactionBuilder']);
    // stellar-sdk ships a UMD browser build (window.StellarSdk): a one-line module hands its names to the import map.
    const shim = `const S = globalThis.StellarSdk; export const { ${[...new Set(sdkNames)].join(', ')} } = S; export default S;`;
    const files: Record<string, [string, Buffer]> = {
      '/stellar.js': ['text/javascript', readFileSync(new URL('./stellar.js', import.meta.url))],
      '/stellar-sdk.js': ['text/javascript', readFileSync(new URL('../node_modules/@stellar/stellar-sdk/dist/stellar-sdk.min.js', import.meta.url))],
      '/stellar-sdk-module.js': ['text/javascript', Buffer.from(shim)],
      '/': ['text/html', Buffer.from('<!doctype html><title>Stellar dApp</title><script src="/stellar-sdk.js"></script>'
        + '<script type="importmap">{"imports":{"@stellar/stellar-sdk":"/stellar-sdk-module.js"}}</script>'
        + '<script type="module">import * as client from "/stellar.js"; import * as sdk from "@stellar/stellar-sdk"; window.client = client; window.sdk = sdk;</script>')],
    };
    const site = createServer((req, res) => {
      const [type, body] = files[req.url ?? ''] ?? ['text/plain', Buffer.from('not found')];
      res.writeHead(files[req.url ?? ''] ? 200 : 404, { 'content-type': type }).end(body);
    });
    const port = await freeLoopbackPort();
    await new Promise<void>((resolve) => site.listen(port, '127.0.0.1', resolve));
    const browser = await launchBrowser();
    try {
      await browser.page.goto(`http://127.0.0.1:${port}/`);
      await browser.page.waitForFunction(() => typeof (globalThis as any).client?.stellarOperation === 'function');
      const inBrowser = await browser.page.evaluate(({ given, seedHex, passphrase, orderHash }) => {
        const { client, sdk } = globalThis as any;
        const globals = { Buffer: typeof (globalThis as any).Buffer, process: typeof (globalThis as any).process };
        const seed = new Uint8Array(seedHex.match(/../g)!.map((byte: string) => parseInt(byte, 16)));
        const key = sdk.Keypair.fromRawEd25519Seed(seed);
        const txs = given.map(([action, response]: [string, unknown]) => {
          const tx = new sdk.TransactionBuilder(new sdk.Account(key.publicKey(), '41'), { fee: '100', networkPassphrase: passphrase })
            .addOperation(client.stellarOperation(action, response)).setTimeout(0).build();
          tx.sign(key);
          return tx.toXDR();
        });
        return { globals, txs, unlock: client.signUnlockMessage(key, orderHash) };
      }, { given: cases, seedHex: Buffer.alloc(32, 3).toString('hex'), passphrase: PASSPHRASE, orderHash: ORDER_HASH });
      // The page's own globals: stellar-sdk keeps its Buffer polyfill inside its bundle.
      expect(inBrowser.globals.process).toBe('undefined');
      expect({ txs: inBrowser.txs, unlock: inBrowser.unlock }).toEqual(inNode);
    } finally {
      await browser.close();
      site.closeAllConnections();
      await new Promise((resolve) => site.close(resolve));
    }
  }, 120_000);
});
