import type { Schemas } from '@cross-chain-relayer/client';
import { explain } from './errors.ts';
import { h, show } from './dom.ts';
import type { Session } from './session.ts';
import type { EvmWallet } from './wallets/evm.ts';
import type { StellarWallet } from './wallets/stellar.ts';

/** What every view shares: the session, the connected wallets, the chains and routes, the status line. */
export interface AppContext {
  session: Session;
  evm?: EvmWallet;
  stellar?: StellarWallet;
  chains: Schemas['Chain'][];
  routes: Schemas['Route'][];
  /** Says what is going on (aria-live): a step under way, done, or an error as a sentence. */
  say(message: string, kind?: 'info' | 'error' | 'done'): void;
  /** Runs a user's action: its steps said, its error explained; the button disabled meanwhile. */
  act(label: string, run: () => Promise<void>, button?: HTMLButtonElement): Promise<void>;
}

export function chainOf(context: AppContext, chainId: string): Schemas['Chain'] | undefined {
  return context.chains.find((chain) => chain.chainId === chainId);
}

/** "TUSD on Devnet A" */
export function tokenName(token: { symbol: string; chainId?: string; chain?: { name: string; chainId: string } }, context: AppContext): string {
  const chainId = token.chain?.chainId ?? token.chainId ?? '';
  return `${token.symbol} on ${token.chain?.name ?? chainOf(context, chainId)?.name ?? `chain ${chainId}`}`;
}

/** The status line and the act() wrapper around it. */
export function statusLine(region: HTMLElement): Pick<AppContext, 'say' | 'act'> {
  const say: AppContext['say'] = (message, kind = 'info') => {
    show(region, h('p', { class: `status ${kind}`, 'data-kind': kind }, message));
  };
  return {
    say,
    async act(label, run, button) {
      if (button) button.disabled = true;
      say(`${label}…`);
      try {
        await run();
        say(`${label}: done.`, 'done');
      } catch (error) {
        say(`${label} failed: ${explain(error)}`, 'error');
      } finally {
        if (button) button.disabled = false;
      }
    },
  };
}
