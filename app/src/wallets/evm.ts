import { sendAndWait, TransactionError } from '@cross-chain-relayer/client';
import { erc20ApproveTransaction } from '@cross-chain-relayer/client/evm';
import { UserError } from '../errors.ts';

/** An EIP-1193 provider: the one interface every injected EVM wallet exposes. */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] | object }): Promise<unknown>;
  on?(event: string, listener: (...args: unknown[]) => void): void;
}

/** What a wallet announces of itself (EIP-6963). */
export interface WalletInfo { uuid: string; name: string; icon: string; rdns: string }
export interface AnnouncedWallet { info: WalletInfo; provider: Eip1193Provider }

/**
 * The injected EVM wallets, by EIP-6963 discovery: listens for `eip6963:announceProvider`, asks with
 * `eip6963:requestProvider`, and calls `onChange` with the list each time a wallet announces itself
 * (wallets may answer late). A legacy `window.ethereum` alone is listed too, named "Browser wallet".
 */
export function discoverEvmWallets(onChange: (wallets: AnnouncedWallet[]) => void): AnnouncedWallet[] {
  const wallets: AnnouncedWallet[] = [];
  window.addEventListener('eip6963:announceProvider', (event) => {
    const detail = (event as CustomEvent<AnnouncedWallet>).detail;
    if (!detail?.info?.uuid || wallets.some((w) => w.info.uuid === detail.info.uuid)) return;
    wallets.push(detail);
    onChange([...wallets]);
  });
  window.dispatchEvent(new Event('eip6963:requestProvider'));
  const legacy = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
  if (legacy && wallets.length === 0) {
    wallets.push({ info: { uuid: 'legacy', name: 'Browser wallet', icon: '', rdns: 'legacy' }, provider: legacy });
    onChange([...wallets]);
  }
  return wallets;
}

const hex = (value: bigint): string => `0x${value.toString(16)}`;
const word = (value: string | bigint): string => BigInt(value).toString(16).padStart(64, '0');

/** A connected EVM wallet: the account, and the calls the app makes through the wallet alone. */
export class EvmWallet {
  constructor(readonly provider: Eip1193Provider, readonly address: string, readonly name: string) {}

  /** Asks the wallet for its account (eth_requestAccounts: the wallet asks the person). */
  static async connect(wallet: AnnouncedWallet): Promise<EvmWallet> {
    const accounts = (await wallet.provider.request({ method: 'eth_requestAccounts' })) as string[];
    const address = accounts[0];
    if (!address) throw new UserError(`${wallet.info.name} shared no account.`);
    return new EvmWallet(wallet.provider, address, wallet.info.name);
  }

  /** The chain the wallet is on, as a decimal string. */
  async chainId(): Promise<string> {
    return BigInt((await this.provider.request({ method: 'eth_chainId' })) as string).toString();
  }

  /**
   * Has the wallet on `chainId` (asks it to switch), and checks it is: a wallet that cannot switch
   * (or is switched back) is named with the chain it is on and the one needed.
   */
  async ensureChain(chainId: string, chainName: string): Promise<void> {
    const current = await this.chainId();
    if (current === chainId) return;
    try {
      await this.provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: hex(BigInt(chainId)) }] });
    } catch (error) {
      if ((error as { code?: number }).code === 4001) throw error;
      throw new UserError(`Your wallet is on chain ${current}, and this step needs ${chainName} (chain ${chainId}). Switch networks in ${this.name}.`);
    }
    const now = await this.chainId();
    if (now !== chainId) throw new UserError(`Your wallet is on chain ${now}, and this step needs ${chainName} (chain ${chainId}). Switch networks in ${this.name}.`);
  }

  /** personal_sign of `message` (text) or of raw bytes (`0x` hex, `{ bytes: true }`), as EIP-191 says. */
  async signMessage(message: string, options: { bytes?: boolean } = {}): Promise<string> {
    const data = options.bytes ? message : `0x${Array.from(new TextEncoder().encode(message), (b) => b.toString(16).padStart(2, '0')).join('')}`;
    return (await this.provider.request({ method: 'personal_sign', params: [data, this.address] })) as string;
  }

  /**
   * Sends `tx` from the account and waits until it is mined; throws when it reverted. Returns the
   * hash; `onSent` hears it as soon as the wallet gives it (before mining).
   */
  async send(tx: { to: string; data: string; value?: bigint }, onSent?: (hash: string) => void): Promise<string> {
    try {
      return await sendAndWait(this.provider, tx, { from: this.address, onSent, timeoutMs: 120_000 });
    } catch (error) {
      if (!(error instanceof TransactionError)) throw error;
      throw new UserError(error.reason === 'reverted' ? 'The transaction failed on chain (reverted).' : 'The transaction was sent but not mined in 2 minutes.', error.hash);
    }
  }

  /** ERC-20 approve(spender, amount), sent and mined (before a deposit or a pool funding pulls the tokens). */
  async approve(token: string, spender: string, amount: bigint): Promise<void> {
    await this.send(erc20ApproveTransaction(token, spender, amount));
  }

  /** The account's balance of `token` (ERC-20 balanceOf, or the native balance for the zero address) on the wallet's current chain. */
  async balanceOf(token: string): Promise<bigint> {
    if (/^0x0{40}$/i.test(token)) return BigInt((await this.provider.request({ method: 'eth_getBalance', params: [this.address, 'latest'] })) as string);
    const answer = await this.provider.request({ method: 'eth_call', params: [{ to: token, data: `0x70a08231${word(this.address)}` }, 'latest'] });
    return BigInt(answer as string);
  }
}
