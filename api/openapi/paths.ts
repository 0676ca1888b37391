import { registry } from './operations.ts';

interface PathPattern {
  pattern: RegExp;
  method: string;
  /** A path without parameters (`/v1/ads/create`), as opposed to `/v1/ads/{id}`. */
  literal: boolean;
}

let patterns: PathPattern[] | undefined;
let literalPaths: Map<string, string[]> | undefined;

/** `/v1/ads/{id}` -> /^\/v1\/ads\/[^/]+$/ */
function toPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}/?$`);
}

function registeredPatterns(): PathPattern[] {
  patterns ??= registry.definitions.flatMap((definition) =>
    definition.type === 'route'
      ? [{ pattern: toPattern(definition.route.path), method: definition.route.method.toUpperCase(), literal: !definition.route.path.includes('{') }]
      : [],
  );
  return patterns;
}

/**
 * Methods the API answers on `path`, read from the OpenAPI registry (every endpoint is registered
 * there), so 405 answers and the document can never disagree. A path the document names literally
 * (`/v1/ads/create`) has that path's methods only, though a parameterised one (`/v1/ads/{id}`)
 * would match it too: `create` is not an id.
 */
export function allowedMethods(path: string): string[] {
  const matching = registeredPatterns().filter((p) => p.pattern.test(path));
  const literal = matching.filter((p) => p.literal);
  const methods = new Set((literal.length > 0 ? literal : matching).map((p) => p.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

/**
 * The methods of `path` when the document names it literally (`/v1/ads/create`: POST), else
 * undefined: a request with another method there is a wrong method (405), not an id to validate.
 */
export function literalPathMethods(path: string): string[] | undefined {
  // Asked on every request: one map lookup (a trailing slash is the same path, as in toPattern).
  literalPaths ??= new Map(registry.definitions.flatMap((definition) =>
    definition.type === 'route' && !definition.route.path.includes('{') ? [[definition.route.path, allowedMethods(definition.route.path)] as const] : []));
  return literalPaths.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
}
