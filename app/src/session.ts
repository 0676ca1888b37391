import { createRelayerClient, ethereumProof, refreshingFetch, RelayerCallError, stellarProof, type Schemas } from '@cross-chain-relayer/client';
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
  /**
   * The client with the access token (asked per request, so a refresh takes effect at once); a 401
   * refreshes the session once and sends the request again (the client's refreshingFetch).
   */
  /** The fetch under `api`: revalidating, a 401 refreshed once (what executeTrade's calls go through too). */
  readonly fetch = refreshingFetch({ fetch: revalidating, refresh: async () => ((await this.refresh()) ? this.stored?.access : undefined) });
  readonly api = createRelayerClient(API_BASE, { accessToken: () => this.stored?.access ?? '', fetch: this.fetch });

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

  /**
   * The login/link body for `wallet`: SIWE (the client's ethereumProof over the wallet's EIP-1193
   * provider) or SEP-10 co-signed by Freighter (stellarProof), with Freighter's network checked
   * against the challenge's. The API's refusals become sentences.
   */
  private async proof(wallet: EvmWallet | StellarWallet): Promise<Schemas['EvmLogin'] | Schemas['StellarLogin']> {
    try {
      if ('provider' in wallet) return await ethereumProof(this.anyone, wallet.provider, wallet.address);
      return await stellarProof(this.anyone, wallet.address, async (transaction, networkPassphrase) => {
        if (networkPassphrase !== wallet.networkPassphrase) {
          throw new UserError(`Freighter is on "${wallet.networkPassphrase}", the service signs in on "${networkPassphrase}". Switch networks in Freighter.`);
        }
        return wallet.signTransaction(transaction);
      });
    } catch (error) {
      throw error instanceof RelayerCallError ? apiError(error.body, error.status) : error;
    }
  }

  /** Signs in with `wallet` (SIWE or SEP-10). */
  async signIn(wallet: EvmWallet | StellarWallet): Promise<void> {
    const body = await this.proof(wallet);
    const login = await this.anyone.POST('/v1/auth/login', { body });
    if (login.error) throw apiError(login.error, login.response.status);
    this.save({ access: login.data.tokens.access, refresh: login.data.tokens.refresh, user: login.data.user });
  }

  /** Links `wallet` (the other chain kind) to the signed-in user. */
  async link(wallet: EvmWallet | StellarWallet): Promise<void> {
    const body = await this.proof(wallet);
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
   * Runs a call (through `api`, a 401 has been refreshed and retried once already). Returns the data
   * or throws the API's error as a sentence.
   */
  async call<T>(request: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const answer = await request();
    if (answer.error !== undefined || answer.data === undefined) throw apiError(answer.error, answer.response.status);
    return answer.data;
  }
}
