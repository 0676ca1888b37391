/**
 * Credentials that travel in a URL's query (a stream ticket: `GET /v1/events?ticket=`, which a
 * browser's EventSource must use) kept out of the logs. A URL is logged with their values replaced;
 * every finished log line is scrubbed once more, whatever wrote it (an error message quoting a
 * URL, a dependency's own log).
 */

/** Query parameters whose values are credentials. */
const SECRET_PARAMS = ['ticket'] as const;

/** What replaces a secret value. */
export const REDACTED = '[REDACTED]';

/** The parameter's name as Express reads it: percent-decoded, `+` a space, `ticket[]` and `ticket[0]` all `ticket`. */
function paramName(rawKey: string): string {
  let key = rawKey.replace(/\+/g, ' ');
  try {
    key = decodeURIComponent(key);
  } catch {
    // a malformed escape: compare the raw text
  }
  return key.replace(/\[.*$/, '').trim().toLowerCase();
}

/**
 * `url` (a path with its query, as `req.originalUrl`) with the value of every secret parameter
 * replaced by `[REDACTED]`, however its name is spelled (any case, percent-encoded, `ticket[]`).
 * Everything else is kept as sent.
 */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  if (question < 0) return url;
  const query = url.slice(question + 1);
  const parts = query.split('&').map((part) => {
    const equals = part.indexOf('=');
    const rawKey = equals < 0 ? part : part.slice(0, equals);
    if (!(SECRET_PARAMS as readonly string[]).includes(paramName(rawKey))) return part;
    return `${rawKey}=${REDACTED}`;
  });
  return `${url.slice(0, question + 1)}${parts.join('&')}`;
}

/** A letter spelled literally or percent-encoded, either case. */
const letter = (c: string) => `(?:${c}|%${c.charCodeAt(0).toString(16)})`;

/**
 * A secret parameter's name (letters as text or percent-encoded, an optional `[..]` suffix), `=`,
 * and its value up to what ends a query value or a JSON string.
 */
const SECRET_IN_TEXT = new RegExp(
  `((?:${SECRET_PARAMS.map((name) => [...name].map(letter).join('')).join('|')})(?:\\[[^\\]=&]*\\]|%5b[^=&]*?%5d)?=)(?!\\[REDACTED\\])[^&\\s"'\\\\#<>]+`,
  'gi',
);

/**
 * `text` (a whole log line) with the value after every `ticket=` replaced by `[REDACTED]`: the
 * last guard, for lines that quote a URL without going through `redactUrl`.
 */
export function redactLogLine(text: string): string {
  return text.replace(SECRET_IN_TEXT, `$1${REDACTED}`);
}
