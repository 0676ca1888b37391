// The pure domain vocabulary every layer shares. It imports nothing, so anyone may import it.
export * from './amounts.ts';
export * from './chain-kind.ts';
export * from './errors.ts';
export * from './ids.ts';
export * from './statuses.ts';
export * from './principal.ts';
export * from './pushed-events.ts';
export * from './order-params.ts';
export * from './route-pricing.ts';
export * from './htlc.ts';
