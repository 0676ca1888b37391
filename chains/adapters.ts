import type { ChainKind } from '../domain/index.ts';
import type { ChainAdapter } from './adapter.ts';
import { evmAdapter } from './evm/adapter.ts';
import { stellarAdapter } from './stellar/adapter.ts';

/** Every chain kind the service speaks, one line each: a new kind is its folder and a line here. */
const ADAPTERS: { readonly [K in ChainKind]: ChainAdapter } = {
  EVM: evmAdapter as ChainAdapter,
  STELLAR: stellarAdapter as ChainAdapter,
};

/** The adapter of a chain kind. Throws on a kind the service does not speak (never on a registered one). */
export function adapterOf(kind: ChainKind): ChainAdapter {
  const adapter = ADAPTERS[kind];
  if (!adapter) throw new TypeError(`unknown chain kind '${String(kind)}'`);
  return adapter;
}
