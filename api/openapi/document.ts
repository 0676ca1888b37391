import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { registry } from './operations.ts';

let cached: object | undefined;

/** The OpenAPI 3.1 document of every endpoint, generated once from the registered zod schemas. */
export function openApiDocument(): object {
  cached ??= new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Cross-Chain Liquidity Relayer API',
      version: '1.0.0',
      description:
        'Makers advertise liquidity on routes between EVM and Stellar chains; Bridgers trade against those ads; ' +
        'settlement is unlocked on both chains by a Groth16 proof of deposit inclusion. Amounts are decimal strings ' +
        'in the smallest unit. Errors share one body: `{statusCode, message, error}`.',
    },
    servers: [{ url: '/' }],
  });
  return cached;
}
