import { createRelayerClient, type Schemas } from '@cross-chain-relayer/client';
import { apiError, UserError } from './errors.ts';
import type { EvmWallet } from './wallets/evm.ts';
import type { StellarWallet } from './wallets/stellar.ts';

/** The API is the service that serves the page: same origin, which the CSP allows and nothing else. */
export const API_BASE = location.origin;

const STORE = 'relayer.session';

/**
 * Every request revalidates (`cache: 'no-cache'`): public reads may be cached 5 s (Cache-Control),
 * and the page reads right after a write or an event; an unchanged list costs a 304 (its ETag).
 */
const revalidating = (request: Request): Promise<Response> => fetch(new Request(request, { cache: 'no-cache' }));

interface Stored { access: string; refresh: string; user: Schemas['User'] }

/**
 * The signed-in user: tokens kept in localStorage (a reload keeps the session), refreshed once on a
 * 401; sign-in with SIWE (EVM) or SEP-10 (Stellar) from the page, and linking the other chain's wallet.
 */
export class Session {
  private stored: Stored | undefined;
  private refreshing: Promise<boolean> | undefined;
  readonly anyone = createRelayerClient(API_BASE, { fetch: revalidating });
  /** The client with the access token (asked per request, so a refresh takes effect at once). */
  readonly api = createRelayerClient(API_BASE, { accessToken: () => this.stored?.access ?? '', fetch: revalidating });

  constructor(private readonly onChange: () => void) {
    try { this.stored = JSON.parse(localStorage.getItem(STORE) ?? 'null') ?? undefined; } catch { this.stored = undefined; }
  }

  get user(): Schemas['User'] | undefined { return this.stored?.user; }
  get accessToken(): string | undefined { return this.stored?.access; }
  /** The signed-in user's address of `kind`, if a wallet of that kind is linked. */
  address(kind: 'EVM' | 'STELLAR'): string | undefined { return this.user?.wallets.find((w) => w.chainKind === kind)?.address; }

  private save(stored: Stored | undefined): void {
    this.stored = stored;
    if (stored) localStorage.setItem(STORE, JSON.stringify(stored));
    else localStorage.removeItem(STORE);
    this.onChange();
  }

  /** The proof of an EVM wallet: SIWE challenge, signed by the wallet. */
  private async evmProof(wallet: EvmWallet): Promise<Schemas['EvmLogin']> {
    const challenge = await this.anyone.POST('/v1/auth/challenge', { body: { address: wallet.address, chainKind: 'EVM' } });
    if (challenge.error) throw apiError(challenge.error, challenge.response.status);
    if (challenge.data.chainKind !== 'EVM') throw new UserError('The service sent no sign-in message.');
    return { chainKind: 'EVM', message: challenge.data.message, signature: await wallet.signMessage(challenge.data.message) };
  }

  /** The proof of a Stellar account: SEP-10 challenge co-signed by Freighter. */
  private async stellarProof(wallet: StellarWallet): Promise<Schemas['StellarLogin']> {
    const challenge = await this.anyone.POST('/v1/auth/challenge', { body: { address: wallet.address, chainKind: 'STELLAR' } });
    if (challenge.error) throw apiError(challenge.error, challenge.response.status);
    if (challenge.data.chainKind !== 'STELLAR') throw new UserError('The service sent no sign-in transaction.');
    if (challenge.data.networkPassphrase !== wallet.networkPassphrase) {
      throw new UserError(`Freighter is on "${wallet.networkPassphrase}", the service signs in on "${challenge.data.networkPassphrase}". Switch networks in Freighter.`);
    }
    return { chainKind: 'STELLAR', transaction: await wallet.signTransaction(challenge.data.transaction) };
  }

  /** Signs in with `wallet` (SIWE or SEP-10). */
  async signIn(wallet: EvmWallet | StellarWallet): Promise<void> {
    const body = 'provider' in wallet ? await this.evmProof(wallet) : await this.stellarProof(wallet);
    const login = await this.anyone.POST('/v1/auth/login', { body });
    if (login.error) throw apiError(login.error, login.response.status);
    this.save({ access: login.data.tokens.access, refresh: login.data.tokens.refresh, user: login.data.user });
  }

  /** Links `wallet` (the other chain kind) to the signed-in user. */
  async link(wallet: EvmWallet | StellarWallet): Promise<void> {
    const body = 'provider' in wallet ? await this.evmProof(wallet) : await this.stellarProof(wallet);
    const linked = await this.call(() => this.api.POST('/v1/auth/link', { body }));
    if (this.stored) this.save({ ...this.stored, user: linked });
  }

  /** Ends the session on the service too (its tokens stop working), then forgets it here. */
  async signOut(): Promise<void> {
    await this.api.POST('/v1/auth/logout').catch(() => undefined);
    this.save(undefined);
  }

  /** A fresh access token (refresh token exchanged); false when the session is over (then signed out). */
  async refresh(): Promise<boolean> {
    this.refreshing ??= (async () => {
      const stored = this.stored;
      if (!stored) return false;
      const answer = await this.anyone.POST('/v1/auth/refresh', { body: { refresh: stored.refresh } });
      if (!answer.data) { this.save(undefined); return false; }
      this.save({ ...stored, access: answer.data.tokens.access, refresh: answer.data.tokens.refresh });
      return true;
    })().finally(() => { this.refreshing = undefined; });
    return this.refreshing;
  }

  /**
   * Runs an authenticated call; on a 401 refreshes once and runs it again. Returns the data or throws
   * the API's error as a sentence.
   */
  async call<T>(request: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    let answer = await request();
    if (answer.response.status === 401 && (await this.refresh())) answer = await request();
    if (answer.error !== undefined || answer.data === undefined) throw apiError(answer.error, answer.response.status);
    return answer.data;
  }
}
