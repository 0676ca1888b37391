/**
 * Which routes the service can price today. An order carries one `amount`, and both contracts move
 * exactly that many base units (the OrderPortal of the order token, the AdManager of the ad token),
 * so a route settles at 1:1 in base units. That is the right price only between two tokens of the
 * same asset with the same decimals: between 6 and 7 decimals a 10-dollar deposit would unlock 100
 * dollars (issue 20, item 3). Until orders carry an amount per chain (architecture.md "Amounts
 * across chains"), a route whose tokens' decimals differ cannot be priced and takes no trades.
 */
export function routePricingProblem(adToken: { symbol: string; decimals: number }, orderToken: { symbol: string; decimals: number }): string | null {
  if (adToken.decimals === orderToken.decimals) return null;
  return `cannot be priced yet: its tokens have different decimals (${adToken.symbol} ${adToken.decimals}, ${orderToken.symbol} ${orderToken.decimals}), and an order carries one amount that both chains would move 1:1 in base units`;
}
