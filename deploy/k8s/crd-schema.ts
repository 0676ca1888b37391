import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';

/**
 * Checks custom resources strictly: against their CRD's schema as the @kubernetes-models package
 * compiles it (types, required fields, formats), and, since that schema lets unknown fields through
 * (a CRD's API server prunes them silently, so a misspelt `maxReplicaCont` would deploy as "no
 * limit"), every field must be one the package's type declarations name. Returns the problems, one
 * line each.
 */
function modelProblems(object: unknown, Model: new (data: never) => { validate(): void }, pkg: string, declaration: string, kind: string): string[] {
  const problems: string[] = [];
  try {
    new Model(object as never).validate();
  } catch (error) {
    problems.push(...String((error as Error).message).split(/\n|, (?=data\/)/).filter(Boolean));
  }
  const require = createRequire(import.meta.url);
  const root = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), declaration);
  unknownFields(object, root, kind, problems);
  return problems;
}

/** A KEDA ScaledObject's problems (KEDA's schema, no unknown field). */
export const scaledObjectProblems = (object: unknown) =>
  modelProblems(object, ScaledObject, '@kubernetes-models/keda', 'keda.sh/v1alpha1/ScaledObject.d.ts', 'ScaledObject');

/** A KEDA TriggerAuthentication's problems (KEDA's schema, no unknown field). */
export const triggerAuthenticationProblems = (object: unknown) =>
  modelProblems(object, TriggerAuthentication, '@kubernetes-models/keda', 'keda.sh/v1alpha1/TriggerAuthentication.d.ts', 'TriggerAuthentication');

/** A Prometheus Operator PodMonitor's problems (its CRD's schema, no unknown field). */
export const podMonitorProblems = (object: unknown) =>
  modelProblems(object, PodMonitor, '@kubernetes-models/prometheus-operator', 'monitoring.coreos.com/v1/PodMonitor.d.ts', 'PodMonitor');

/** A Prometheus Operator PrometheusRule's problems (its CRD's schema, no unknown field). */
export const prometheusRuleProblems = (object: unknown) =>
  modelProblems(object, PrometheusRule, '@kubernetes-models/prometheus-operator', 'monitoring.coreos.com/v1/PrometheusRule.d.ts', 'PrometheusRule');

/** A field of a declared interface: either another declared interface (by file), a map, or a leaf. */
type FieldType = { kind: 'interface'; file: string; array: boolean } | { kind: 'map' } | { kind: 'leaf' };

const declarations = new Map<string, Map<string, FieldType>>();

/** The fields of the first interface a `.d.ts` file exports, with where each field's type is declared. */
function declaredFields(file: string): Map<string, FieldType> {
  const cached = declarations.get(file);
  if (cached) return cached;
  const source = readFileSync(file, 'utf8');
  const imports = new Map<string, string>();
  for (const match of source.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) imports.set(match[1]!, match[2]!);
  // A file that only aliases another declaration (`export type IAuthSecretTargetRef = IAuthTargetRef;`) has its fields.
  const alias = /^export type \w+ = (\w+);$/m.exec(source)?.[1];
  const aliased = alias && !/export interface/.test(source) ? imports.get(alias) : undefined;
  if (aliased) {
    const fields = declaredFields(resolveDeclaration(file, aliased));
    declarations.set(file, fields);
    return fields;
  }
  const body = /export interface \w+(?: extends [\w, ]+)? \{\n([\s\S]*?)\n\}/.exec(source)?.[1] ?? '';
  const fields = new Map<string, FieldType>();
  for (const match of body.matchAll(/^ {4}"([^"]+)"\??: ([^\n]*)$/gm)) {
    const [, name, type] = match as unknown as [string, string, string];
    const named = /^(?:Array<)?(\w+)>?;$/.exec(type);
    const from = named && imports.get(named[1]!);
    if (from) fields.set(name, { kind: 'interface', file: resolveDeclaration(file, from), array: type.startsWith('Array<') });
    else if (type.startsWith('{')) fields.set(name, { kind: 'map' });
    else fields.set(name, { kind: 'leaf' });
  }
  declarations.set(file, fields);
  return fields;
}

function resolveDeclaration(fromFile: string, specifier: string): string {
  if (specifier.startsWith('.')) return path.resolve(path.dirname(fromFile), specifier.replace(/\.js$/, '.d.ts'));
  // A package's subpath: its declaration file beside the module, in the nearest node_modules that has
  // the package (resolved by hand, as the packages' `exports` do not list their declaration paths).
  const parts = specifier.split('/');
  const name = parts.slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
  const subpath = parts.slice(specifier.startsWith('@') ? 2 : 1).join('/');
  for (let dir = path.dirname(fromFile); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name, `${subpath}.d.ts`);
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`no declaration file for ${specifier} (imported by ${fromFile})`);
}

function unknownFields(value: unknown, file: string, at: string, problems: string[]): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const fields = declaredFields(file);
  for (const [key, child] of Object.entries(value)) {
    const field = fields.get(key);
    if (!field) {
      problems.push(`${at}.${key}: unknown field`);
      continue;
    }
    if (field.kind !== 'interface') continue;
    const items = field.array && Array.isArray(child) ? child : [child];
    items.forEach((item, index) => unknownFields(item, field.file, field.array ? `${at}.${key}[${index}]` : `${at}.${key}`, problems));
  }
}
