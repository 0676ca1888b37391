import { registry } from './operations.ts';

interface PathPattern {
  pattern: RegExp;
  method: string;
}

let patterns: PathPattern[] | undefined;

/** `/v1/ads/{id}` -> /^\/v1\/ads\/[^/]+$/ */
function toPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}/?$`);
}

/**
 * Methods the API answers on `path`, read from the OpenAPI registry (every endpoint is registered
 * there), so 405 answers and the document can never disagree.
 */
export function allowedMethods(path: string): string[] {
  patterns ??= registry.definitions.flatMap((definition) =>
    definition.type === 'route' ? [{ pattern: toPattern(definition.route.path), method: definition.route.method.toUpperCase() }] : [],
  );
  const methods = new Set(patterns.filter((p) => p.pattern.test(path)).map((p) => p.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
