/**
 * Marks every enum a client only reads (in a response, or in a webhook this service sends) as open
 * to new values: `x-extensible-enum: true` and a sentence saying so. A new trade status, event type
 * or error code is then an addition the compatibility policy allows, and the 3.0 rendering
 * (openapi-30.ts) spells such an enum so that generated clients accept a value they do not know
 * instead of raising. Enums a client sends stay closed: the service refuses values it does not know.
 * A schema a request also uses stays closed too (one schema cannot be both).
 */
export function markResponseEnumsOpen(document: Record<string, unknown>): void {
  const components = ((document.components as { schemas?: Record<string, Schema> } | undefined)?.schemas) ?? {};
  const sentByClients = new Set<string>();
  const requestRoots: unknown[] = [];
  const readRoots: unknown[] = [];
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(item)) {
      requestRoots.push(operation.requestBody, operation.parameters);
      readRoots.push(operation.responses);
    }
  }
  for (const item of Object.values((document.webhooks ?? {}) as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(item)) readRoots.push(operation.requestBody);
  }
  collectRefs(requestRoots, components, sentByClients);
  const visited = new Set<string>();
  for (const root of readRoots) markEnums(root, components, sentByClients, visited);
}

type Schema = Record<string, unknown>;
type Operation = { requestBody?: unknown; parameters?: unknown; responses?: unknown };

const OPEN_NOTE = 'Open: values may be added in a minor release; treat one you do not know as unknown, not as an error.';

const componentName = (ref: unknown) => typeof ref === 'string' && ref.startsWith('#/components/schemas/') ? ref.slice(21) : undefined;

/** Every component reachable from `node` by $ref, transitively. */
function collectRefs(node: unknown, components: Record<string, Schema>, into: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collectRefs(item, components, into);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const name = componentName((node as Schema).$ref);
  if (name && !into.has(name)) {
    into.add(name);
    collectRefs(components[name], components, into);
  }
  for (const value of Object.values(node)) collectRefs(value, components, into);
}

function markEnums(node: unknown, components: Record<string, Schema>, closed: Set<string>, visited: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) markEnums(item, components, closed, visited);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Schema;
  const name = componentName(schema.$ref);
  if (name) {
    if (closed.has(name) || visited.has(name)) return;
    visited.add(name);
    markEnums(components[name], components, closed, visited);
    return;
  }
  if (Array.isArray(schema.enum) && schema.type === 'string' && schema.enum.length > 1) {
    schema['x-extensible-enum'] = true;
    schema.description = schema.description ? `${schema.description as string} ${OPEN_NOTE}` : OPEN_NOTE;
  }
  for (const value of Object.values(schema)) markEnums(value, components, closed, visited);
}
