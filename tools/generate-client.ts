/**
 * Regenerates the typed client's sources (`npm run client:generate`): client/openapi.json (the
 * document, as /openapi.json answers it) and client/schema.d.ts (its types, by openapi-typescript),
 * and client/evm.js + client/evm.d.ts (the EVM contract calls, bundled from the service's
 * chains/evm/call-args.ts and chains/evm/abi.ts through client/evm-entry.ts), and client/order.js +
 * client/order.d.ts (`orderHashOf`, from chains/order-hash.ts through client/order-entry.ts), and
 * client/events.js + client/events.d.ts (the stream helpers, from client/events-entry.ts), and client/stellar.js +
 * client/flows.js + client/flows.d.ts (confirm, token refresh, EIP-1193 send, sign-in, from client/flows-entry.ts), client/stellar.d.ts (the Soroban calls and the unlock text signature, from client/stellar-entry.ts), and
 * client/execute.js + client/execute.d.ts (executeTrade and resumeTrade, from client/execute-entry.ts). client/client.test.ts
 * fails while any differs from what this would write.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bundleEventHelpers, bundleEvmCalls, bundleExecute, declareExecute, bundleFlowHelpers, declareFlowHelpers, bundleOrderHash, bundleStellarCalls, declareEventHelpers, declareEvmCalls, declareOrderHash, declareStellarCalls, generateClientTypes, servedDocument,
} from '../client/generate.ts';

const clientDir = fileURLToPath(new URL('../client/', import.meta.url));
const document = servedDocument();
writeFileSync(path.join(clientDir, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
writeFileSync(path.join(clientDir, 'schema.d.ts'), await generateClientTypes(document));
writeFileSync(path.join(clientDir, 'evm.js'), await bundleEvmCalls());
writeFileSync(path.join(clientDir, 'evm.d.ts'), declareEvmCalls());
writeFileSync(path.join(clientDir, 'order.js'), await bundleOrderHash());
writeFileSync(path.join(clientDir, 'order.d.ts'), declareOrderHash());
writeFileSync(path.join(clientDir, 'events.js'), await bundleEventHelpers());
writeFileSync(path.join(clientDir, 'events.d.ts'), declareEventHelpers());
writeFileSync(path.join(clientDir, 'flows.js'), await bundleFlowHelpers());
writeFileSync(path.join(clientDir, 'flows.d.ts'), declareFlowHelpers());
writeFileSync(path.join(clientDir, 'stellar.js'), await bundleStellarCalls());
writeFileSync(path.join(clientDir, 'stellar.d.ts'), declareStellarCalls());
writeFileSync(path.join(clientDir, 'execute.js'), await bundleExecute());
writeFileSync(path.join(clientDir, 'execute.d.ts'), declareExecute());
console.log(`client/openapi.json, client/schema.d.ts, client/evm.js, client/evm.d.ts, client/order.js, client/order.d.ts, client/events.js, client/events.d.ts, client/flows.js, client/flows.d.ts, client/stellar.js, client/stellar.d.ts, client/execute.js and client/execute.d.ts regenerated (${Object.keys((document as { paths: object }).paths).length} paths)`);
