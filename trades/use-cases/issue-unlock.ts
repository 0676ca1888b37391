import type { Principal } from '../../domain/principal.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { ttlWithin } from '../../chains/timing.ts';
import { isWalletSignature } from '../../chains/wallet-signature.ts';
import type { ChainKind } from '../../domain/index.ts';
import type { TradeLifecycleRecord } from '../../db/repositories/trade-lifecycle.ts';
import { encodeProof, type Groth16Proof } from '../../prover/solidity.ts';
import { stateOf, unlockDue, unlockWindowEnd, type Role, type UnlockSide } from '../lifecycle/index.ts';
import { TradeAwaitingError, TradeInputError, TradeNotReadyError } from '../errors.ts';
import { callTarget, type TradeContext } from './context.ts';
import { assertDepositCanonical, partyTradeWithDeposit } from './party.ts';

/**
 * Signed unlock call data with the proof for the unlock the caller may be given
 * (trades/lifecycle.ts `unlockDue`): `side` when asked for, else the caller's default (the
 * Maker's the ad side, the Bridger's the order side); only the side in turn: the ad side (pays
 * the Bridger, to either party) first, the order side (pays the Maker) once the ad side is
 * confirmed. `signature` is the caller's wallet signature over the 32 bytes of the order hash.
 */
export function issueUnlock(ctx: TradeContext) {
  return async (principal: Principal, tradeId: string, signature: string, side?: UnlockSide) => {
    const { trade, role, deposit } = await partyTradeWithDeposit(ctx, principal, tradeId);
    const adChain = await ctx.chainOf(trade.adChainId);
    const orderChain = await ctx.chainOf(trade.orderChainId);
    assertPartySignature(trade, role, role === 'maker' ? adChain.kind : orderChain.kind, signature);
    const due = unlockDue(stateOf(trade), role, side);
    if ('missing' in due) throw new (due.awaited ? TradeAwaitingError : TradeNotReadyError)(`trade ${tradeId}: ${due.missing}`);
    const proof = trade.proof!;
    await assertDepositCanonical(ctx, trade, deposit);
    // Never valid past the side's window (trades/lifecycle/unlock-order.ts: the ad side closes at lockExpiry, the order side at refundTime).
    const [chain, contract] = due.side === 'ad' ? [adChain, trade.orderParams.adManager] : [orderChain, trade.orderParams.orderPortal];
    const ttl = ttlWithin(unlockWindowEnd(due.side, trade.orderParams), ctx.nowSeconds(), ctx.settings.signedRequestTtlSeconds);
    if (ttl <= 0) throw new TradeNotReadyError(`the ${due.side}-chain unlock window of trade ${tradeId} has closed`);
    const signed = await buildSignedCallData({
      target: callTarget(chain, contract),
      action: 'unlock',
      fields: { orderHash: trade.orderHash, nullifierHash: proof.nullifierHash, targetRoot: proof.targetRoot },
      signers: ctx.deps.signers,
      ttlSeconds: ttl,
      now: ctx.nowMs(),
    });
    return { ...signed, orderParams: trade.orderParams, proof: encodeProof(proof.proof as Groth16Proof), orderHash: trade.orderHash };
  };
}

/** The caller proves it holds its party's wallet: a signature over the order hash, or `TradeInputError` on `signature`. */
function assertPartySignature(trade: TradeLifecycleRecord, role: Role, kind: ChainKind, signature: string): void {
  const address = role === 'maker' ? trade.adCreatorAddress : trade.bridgerAddress;
  if (!isWalletSignature(kind, address, Buffer.from(trade.orderHash.slice(2), 'hex'), signature)) {
    const problem = `must be your wallet's signature (${address}) over the order hash ${trade.orderHash} (its 32 bytes or its 0x hex text)`;
    throw new TradeInputError('signature', problem);
  }
}
