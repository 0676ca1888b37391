/**
 * The OpenAPI 3.0 rendering of the served 3.1 document, for the client generators that read only
 * 3.0 (Go's oapi-codegen through kin-openapi, Rust's progenitor, older openapi-generator releases).
 * Same paths, operations and schemas; only the spelling differs:
 * - `type: [T, "null"]` and `anyOf: [..., {type: "null"}]` become `nullable: true`;
 * - `const` becomes a one-value `enum`; a schema's `examples` list its first `example`;
 * - numeric `exclusiveMinimum`/`exclusiveMaximum` become the 3.0 boolean form;
 * - a `$ref` with sibling keywords (3.0 ignores them) is wrapped in `allOf`;
 * - `webhooks` (3.1 only) move to `x-webhooks`, the license `identifier` goes;
 * - an enum marked open (`x-extensible-enum`, open-enums.ts) becomes `anyOf` its known values or any
 *   string, so a generated client (openapi-python-client's enums raise on an unknown value) takes a
 *   value added later.
 */
export function toOpenApi30(document: object): object {
  const { webhooks, jsonSchemaDialect: _dialect, ...rest } = structuredClone(document) as Record<string, unknown>;
  const converted = convertNode({ ...rest, openapi: '3.0.3' }, 'document') as Record<string, unknown>;
  const info = converted.info as { license?: Record<string, unknown> } | undefined;
  if (info?.license) delete info.license.identifier;
  if (webhooks) converted['x-webhooks'] = convertNode(webhooks, 'document');
  return converted;
}

type Json = unknown;
type Where = 'document' | 'schema';

/** Keys whose value is a schema, or a list or map of schemas. */
const SCHEMA_KEYS = new Set(['schema', 'items', 'not', 'additionalProperties']);
const SCHEMA_LIST_KEYS = new Set(['allOf', 'anyOf', 'oneOf']);
const SCHEMA_MAP_KEYS = new Set(['properties', 'schemas']);

function convertNode(node: Json, where: Where): Json {
  if (Array.isArray(node)) return node.map((item) => convertNode(item, where));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node as Record<string, Json>)) {
    if (SCHEMA_KEYS.has(key) && value && typeof value === 'object') out[key] = convertSchema(value);
    else if (SCHEMA_LIST_KEYS.has(key) && Array.isArray(value)) out[key] = value.map(convertSchema);
    else if (SCHEMA_MAP_KEYS.has(key) && value && typeof value === 'object' && (where === 'schema' || key === 'schemas')) {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, Json>).map(([name, schema]) => [name, convertSchema(schema)]));
    } else out[key] = convertNode(value, where);
  }
  return out;
}

function convertSchema(input: Json): Json {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return input;
  const schema = convertNode(input, 'schema') as Record<string, Json>;
  if (Array.isArray(schema.type)) {
    const types = (schema.type as string[]).filter((type) => type !== 'null');
    if (types.length < schema.type.length) schema.nullable = true;
    if (types.length === 1) schema.type = types[0];
    else {
      delete schema.type;
      schema.anyOf = types.map((type) => ({ type }));
    }
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (!Array.isArray(options)) continue;
    const nonNull = options.filter((option) => (option as { type?: string }).type !== 'null');
    if (nonNull.length === options.length) continue;
    schema.nullable = true;
    if (nonNull.length === 1) {
      delete schema[key];
      const only = nonNull[0] as Record<string, Json>;
      if (only.$ref) schema.allOf = [only];
      else Object.assign(schema, only, { nullable: true });
    } else schema[key] = nonNull;
  }
  if ('const' in schema) {
    schema.enum = [schema.const];
    delete schema.const;
  }
  if (Array.isArray(schema.examples)) {
    if (schema.examples.length > 0 && !('example' in schema)) schema.example = schema.examples[0];
    delete schema.examples;
  }
  for (const [key, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof schema[key] === 'number') {
      schema[bound] = schema[key];
      schema[key] = true;
    }
  }
  if (schema['x-extensible-enum'] === true && Array.isArray(schema.enum)) {
    const { enum: known, type, ...others } = schema;
    return { ...others, anyOf: [{ type, enum: known }, { type }] };
  }
  for (const dropped of ['$schema', '$id', 'contentEncoding', 'contentMediaType', 'unevaluatedProperties']) delete schema[dropped];
  if (typeof schema.$ref === 'string' && Object.keys(schema).length > 1) {
    const { $ref, ...siblings } = schema;
    return { ...siblings, allOf: [{ $ref }] };
  }
  return schema;
}
