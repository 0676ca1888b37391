import { Router } from 'express';
import type { Knex } from 'knex';
import type { AuthService } from '../../auth/service.ts';
import { stellarCurrencies, type StellarCurrency } from '../../db/repositories/chains.ts';
import { registry } from '../openapi/operations.ts';

registry.registerPath({
  method: 'get', path: '/.well-known/stellar.toml', operationId: 'getStellarToml', tags: ['Auth'], summary: 'SEP-1 stellar.toml: how Stellar wallets sign in',
  description:
    'NETWORK_PASSPHRASE (the registry\'s Stellar network), SIGNING_KEY (the key that signs SEP-10 challenges), WEB_AUTH_ENDPOINT (GET/POST /v1/auth/sep10) ' +
    'and the registry\'s Stellar tokens of that network as [[CURRENCIES]] (code, contract, name, display_decimals), ' +
    'so a stock wallet SDK given this host as home domain signs in unmodified. In production publish the same at ' +
    'https://SEP10_HOME_DOMAIN/.well-known/stellar.toml (or route that domain here).',
  responses: { 200: { description: 'TOML', content: { 'text/plain': { schema: { type: 'string' } } } } },
});

/** A TOML basic string: quotes and backslashes escaped (the values are keys, URLs and a passphrase). */
const tomlString = (value: string) => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * One SEP-1 [[CURRENCIES]] table: every registry token is a contract (SEP-41, or the Stellar Asset
 * Contract of a classic asset), so it is named by `contract`; display_decimals is capped at SEP-1's 7.
 */
function currencyTable(token: StellarCurrency): string[] {
  return [
    '[[CURRENCIES]]',
    `code=${tomlString(token.symbol.slice(0, 12))}`,
    `contract=${tomlString(token.contract)}`,
    `name=${tomlString(token.name)}`,
    `display_decimals=${Math.min(token.decimals, 7)}`,
    '',
  ];
}

/**
 * GET /.well-known/stellar.toml (SEP-1), the entry point of a Stellar wallet's SEP-10 sign-in.
 * In production WEB_AUTH_ENDPOINT is https://SEP10_WEB_AUTH_DOMAIN/v1/auth/sep10; outside it, the
 * scheme and host this request came in on, as the SEP-10 domains then follow the host too.
 */
export function stellarTomlRouter(deps: { auth: AuthService; knex: Knex; production: boolean }): Router {
  const router = Router();
  router.get('/.well-known/stellar.toml', async (req, res) => {
    const host = req.get('host');
    const server = await deps.auth.sep10Server(host);
    const currencies = await stellarCurrencies(deps.knex, server.networkPassphrase);
    const origin = deps.production ? `https://${server.webAuthDomain}` : `${req.protocol}://${host ?? 'localhost'}`;
    // SEP-1: any web page may read it.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.type('text/plain').send([
      'VERSION="2.7.0"',
      `NETWORK_PASSPHRASE=${tomlString(server.networkPassphrase)}`,
      `SIGNING_KEY=${tomlString(server.signingKey)}`,
      `WEB_AUTH_ENDPOINT=${tomlString(`${origin}/v1/auth/sep10`)}`,
      '',
      // SEP-1 asks every stellar.toml to say who runs it; wallets (the Stellar wallet SDK) read this table.
      '[DOCUMENTATION]',
      'ORG_NAME="Cross-Chain Liquidity Relayer"',
      `ORG_URL=${tomlString(origin)}`,
      '',
      ...currencies.flatMap(currencyTable),
    ].join('\n'));
  });
  return router;
}
