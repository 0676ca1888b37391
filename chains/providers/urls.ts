/** A chain's providers: `rpcUrls` when listed, else its one `rpcUrl`, else none. */
export function rpcUrlsOf(chain: { rpcUrl?: string | null; rpcUrls?: readonly string[] | null }): string[] {
  if (chain.rpcUrls && chain.rpcUrls.length > 0) return [...chain.rpcUrls];
  return chain.rpcUrl ? [chain.rpcUrl] : [];
}
