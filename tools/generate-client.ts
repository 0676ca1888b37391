/**
 * Regenerates the typed client's sources from the OpenAPI document the service serves
 * (`npm run client:generate`): client/openapi.json (the document, as /openapi.json answers it) and
 * client/schema.d.ts (its types, by openapi-typescript). client/client.test.ts fails while either
 * differs from what this would write.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateClientTypes, servedDocument } from '../client/generate.ts';

const clientDir = fileURLToPath(new URL('../client/', import.meta.url));
const document = servedDocument();
writeFileSync(path.join(clientDir, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
writeFileSync(path.join(clientDir, 'schema.d.ts'), await generateClientTypes(document));
console.log(`client/openapi.json and client/schema.d.ts regenerated (${Object.keys((document as { paths: object }).paths).length} paths)`);
