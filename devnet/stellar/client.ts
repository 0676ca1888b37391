import {
  authorizeEntry, BASE_FEE, Keypair, Operation, rpc, scValToNative, TransactionBuilder, xdr, type Transaction,
} from '@stellar/stellar-sdk';

/** What a submitted Soroban or classic transaction ended as. */
export interface Submitted {
  hash: string;
  ledger: number;
  /** The invoked function's return value (Soroban only). */
  returnValue?: xdr.ScVal;
  response: rpc.Api.GetSuccessfulTransactionResponse;
}

/** Thrown when a transaction is refused at submission or fails in its ledger. */
export class StellarSubmitError extends Error {
  constructor(message: string, readonly hash?: string, readonly resultXdr?: string) {
    super(message);
    this.name = 'StellarSubmitError';
  }
}

export interface SubmitOptions {
  /** Keys that sign the auth entries of their addresses (other than the source's). */
  authSigners?: Keypair[];
  /** How long the transaction stays valid (default 60 s). */
  timeoutSeconds?: number;
  /** The network's ledger time (unix seconds) when it differs from this machine's clock (the devnet's `increaseTime`). */
  ledgerTime?: number;
}

/**
 * What any Stellar dApp does for one operation: load the source account, build, simulate and
 * assemble (`prepareTransaction`: footprint, resources, fee and recorded auth), sign the auth
 * entries other than the source's with `authSigners`, sign the envelope, submit and wait for the ledger.
 */
export async function submitOperation(
  server: rpc.Server,
  networkPassphrase: string,
  source: Keypair,
  operation: xdr.Operation,
  { authSigners = [], timeoutSeconds = 60, ledgerTime }: SubmitOptions = {},
): Promise<Submitted> {
  const account = await server.getAccount(source.publicKey());
  const builder = new TransactionBuilder(account, { fee: BASE_FEE, networkPassphrase }).addOperation(operation);
  // The upper time bound is the network's: on a ledger clock moved ahead of ours, ours would be past it (txTooLate).
  if (ledgerTime === undefined) builder.setTimeout(timeoutSeconds);
  else builder.setTimebounds(0, ledgerTime + timeoutSeconds);
  let tx: Transaction = builder.build();
  const isSoroban = operation.body().switch() === xdr.OperationType.invokeHostFunction();
  if (isSoroban) {
    tx = await server.prepareTransaction(tx);
    if (authSigners.length > 0) tx = await signAuthEntries(server, networkPassphrase, tx, authSigners);
  }
  tx.sign(source);
  return sendAndWait(server, tx);
}

/**
 * Signs every address-credentialed auth entry whose address is one of `signers` (as a wallet's
 * `authorizeEntry` does, valid for 100 ledgers), then simulates again in enforcing mode so the
 * resources cover the signature checks.
 */
async function signAuthEntries(server: rpc.Server, networkPassphrase: string, tx: Transaction, signers: Keypair[]): Promise<Transaction> {
  const latest = await server.getLatestLedger();
  const envelope = tx.toEnvelope();
  const op = envelope.v1().tx().operations()[0]!.body().invokeHostFunctionOp();
  const signed = await Promise.all(op.auth().map(async (entry) => {
    if (entry.credentials().switch() !== xdr.SorobanCredentialsType.sorobanCredentialsAddress()) return entry;
    const address = entry.credentials().address().address();
    const signer = signers.find((key) => address.switch() === xdr.ScAddressType.scAddressTypeAccount()
      && key.rawPublicKey().equals(address.accountId().ed25519()));
    return signer ? authorizeEntry(entry, signer, latest.sequence + 100, networkPassphrase) : entry;
  }));
  op.auth(signed);
  const rebuilt = TransactionBuilder.fromXDR(envelope, networkPassphrase) as Transaction;
  // Simulate again with the signed entries (enforcing): the signature checks cost instructions.
  const sim = await server.simulateTransaction(rebuilt);
  if (rpc.Api.isSimulationError(sim)) throw new StellarSubmitError(`simulation with signed auth failed: ${sim.error}`);
  return rpc.assembleTransaction(rebuilt, sim).build();
}

/** Submits a signed transaction and waits until its ledger closed; throws StellarSubmitError on refusal or failure. */
export async function sendAndWait(server: rpc.Server, tx: Transaction): Promise<Submitted> {
  const sent = await server.sendTransaction(tx);
  if (sent.status !== 'PENDING' && sent.status !== 'DUPLICATE') {
    const code = sent.errorResult?.result().switch().name ?? sent.status;
    throw new StellarSubmitError(`transaction ${sent.hash} refused: ${code}`, sent.hash, sent.errorResult?.toXDR('base64'));
  }
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const got = await server.getTransaction(sent.hash);
    if (got.status === rpc.Api.GetTransactionStatus.SUCCESS) {
      return { hash: sent.hash, ledger: got.ledger, returnValue: got.returnValue, response: got };
    }
    if (got.status === rpc.Api.GetTransactionStatus.FAILED) {
      const results = got.resultXdr.result().results?.() ?? [];
      const detail = results.map((r) => r.tr?.().value()?.switch?.().name ?? r.switch().name).join(', ');
      throw new StellarSubmitError(
        `transaction ${sent.hash} failed: ${got.resultXdr.result().switch().name} ${detail}`,
        sent.hash,
        got.resultXdr.toXDR('base64'),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new StellarSubmitError(`transaction ${sent.hash} not in a ledger after 60 s`, sent.hash);
}

/** Funds `account` from the network's friendbot (10,000 XLM) unless it exists already. */
export async function fund(server: rpc.Server, account: string): Promise<void> {
  try {
    await server.getAccount(account);
  } catch {
    await server.requestAirdrop(account);
  }
}

/**
 * A read-only contract call, simulated (what an explorer or wallet does for a view), from
 * `source` (an existing account); resolves with its result as a native value (`scValToNative`).
 */
export async function readContract(
  server: rpc.Server,
  networkPassphrase: string,
  source: string,
  contract: string,
  fn: string,
  args: xdr.ScVal[] = [],
): Promise<any> {
  const tx = new TransactionBuilder(await server.getAccount(source), { fee: BASE_FEE, networkPassphrase })
    .addOperation(Operation.invokeContractFunction({ contract, function: fn, args }))
    .setTimeout(30)
    .build();
  const sim = await server.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`${fn} on ${contract} failed: ${(sim as { error?: string }).error}`);
  return scValToNative(sim.result!.retval);
}
