import { expect } from 'vitest';
import { AD_CHAIN, devnetClient, ORDER_CHAIN, tradeParties, type DevnetClient } from './devnet-client.ts';
import { startTestService, type TestService } from './service.ts';
import { call, loginEvm } from './wallets.ts';

/**
 * The two-chain scene most end-to-end files start from: the real service (embedded orchestrator,
 * its own database) with the devnet on two anvil chains (ads on AD_CHAIN 31338, orders on
 * ORDER_CHAIN 31337), a devnet client, the Maker and the Bridger (anvil's well-known accounts)
 * signed in, and the TUSD -> TUSD route. What each file used to set up by hand, in one place.
 */
export interface Scene {
  service: TestService;
  devnet: DevnetClient;
  /** Anvil's well-known Maker and Bridger: keys (for the chain) and accounts (for sign-in). */
  parties: ReturnType<typeof tradeParties>;
  makerToken: string;
  bridgerToken: string;
  /** The Bridger's user id (what the books and idempotency keys are scoped to). */
  bridgerUserId: string;
  /** The route of `symbol` (TUSD unless asked) from AD_CHAIN's token to ORDER_CHAIN's. */
  routeId: string;
  /** GET /v1/trades/:id's body. */
  trade(id: string): Promise<any>;
  /** GET /v1/ads/:id's body (the books: available, locked). */
  ad(id: string): Promise<any>;
  /**
   * An ad of `amount` on the scene's route, funded on the AdManager by the Maker and confirmed:
   * its id. `bounds` are the ad's min/max trade amounts; `on` another service over the same chains,
   * with the Maker's `token` there.
   */
  createAd(amount: bigint, bounds?: { minAmount?: string; maxAmount?: string }, on?: TestService, token?: string): Promise<string>;
  /** Closes the devnet client and the service (safe to call twice). */
  close(): Promise<void>;
}

export interface SceneOptions {
  /** Settings on top of the devnet's (the service's config names, as strings). */
  env?: Record<string, string>;
  /** The route's token symbol on both chains (default TUSD). */
  symbol?: string;
}

/** Starts the two-chain scene; the caller closes it in afterAll. Nothing is left running when a step fails. */
export async function startScene(options: SceneOptions = {}): Promise<Scene> {
  const symbol = options.symbol ?? 'TUSD';
  const parties = tradeParties();
  const service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', ...options.env });
  let devnet: DevnetClient | undefined;
  try {
    devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
    const makerToken: string = (await loginEvm(service, parties.maker)).body.tokens.access;
    const bridgerLogin = (await loginEvm(service, parties.bridger)).body;
    const routes = await call(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=${symbol}`);
    const routeId: string = routes.body.data.find((r: any) => r.adToken.symbol === symbol && r.orderToken.symbol === symbol).id;
    const chains = devnet;
    const scene: Scene = {
      service, devnet: chains, parties, makerToken, bridgerToken: bridgerLogin.tokens.access, bridgerUserId: bridgerLogin.user.id, routeId,
      trade: async (id) => (await call(service, 'GET', `/v1/trades/${id}`)).body,
      ad: async (id) => (await call(service, 'GET', `/v1/ads/${id}`)).body,
      async createAd(amount, bounds = {}, on = service, token = makerToken) {
        const created = await call(on, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: parties.maker.address, fundAmount: amount.toString(), ...bounds }, token);
        expect(created.status).toBe(200);
        await chains.approve(AD_CHAIN, parties.makerKey!.privateKey, 'adManager', amount);
        const txHash = await chains.send(AD_CHAIN, 'adManager', parties.makerKey!.privateKey, 'createAd', created.body);
        expect((await call(on, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash }, token)).status).toBe(200);
        return created.body.adId;
      },
      async close() {
        chains.close();
        await service.close();
      },
    };
    return scene;
  } catch (error) {
    devnet?.close();
    await service.close();
    throw error;
  }
}
