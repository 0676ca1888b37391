import type { VerifiedAction } from './adapter.ts';

/**
 * A verified event spelled for comparison between providers: everything but its confirmations,
 * which grow with each provider's head (providers agree when they saw the same event in the same block).
 */
export function verifiedKey(action: VerifiedAction): string {
  const { chainId, txHash, logIndex, block, blockHash, from, event, args } = action;
  const sortedArgs = Object.keys(args).sort().map((name) => `${name}=${args[name]}`).join(',');
  return [chainId, txHash, logIndex, block, blockHash.toLowerCase(), from.toLowerCase(), event, sortedArgs].join(';');
}
