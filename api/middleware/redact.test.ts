import { describe, expect, it } from 'vitest';
import { createProcessLogger } from '../../entrypoints/logger.ts';
import { redactLogLine, redactUrl } from './redact.ts';

const TICKET = 'Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5';

describe('redactUrl', () => {
  it('replaces the value of `ticket` however Express would read the name, and keeps everything else as sent', () => {
    expect(redactUrl(`/v1/events?ticket=${TICKET}&lastEventId=3`)).toBe('/v1/events?ticket=[REDACTED]&lastEventId=3');
    expect(redactUrl(`/v1/events?lastEventId=3&Ticket=${TICKET}`)).toBe('/v1/events?lastEventId=3&Ticket=[REDACTED]');
    expect(redactUrl(`/v1/events?%74icket=${TICKET}`)).toBe('/v1/events?%74icket=[REDACTED]');
    expect(redactUrl(`/v1/events?ticket[]=${TICKET}&ticket%5B1%5D=${TICKET}`)).toBe('/v1/events?ticket[]=[REDACTED]&ticket%5B1%5D=[REDACTED]');
    expect(redactUrl(`/v1/events?ticket`)).toBe('/v1/events?ticket=[REDACTED]');
    expect(redactUrl('/v1/ads?limit=5&cursor=abc')).toBe('/v1/ads?limit=5&cursor=abc');
    expect(redactUrl('/v1/ads')).toBe('/v1/ads');
    expect(redactUrl('/v1/events?tickets=1&%zz=2')).toBe('/v1/events?tickets=1&%zz=2');
  });
});

describe('redactLogLine', () => {
  it('replaces every ticket value in a line, wherever it is quoted', () => {
    const line = JSON.stringify({ msg: `GET http://h/v1/events?ticket=${TICKET} failed`, err: { message: `at /v1/events?a=1&TICKET=${TICKET}` }, url: `?%74%69cket=${TICKET}#x` });
    const redacted = redactLogLine(line);
    expect(redacted).not.toContain(TICKET);
    expect(redacted.match(/\[REDACTED\]/g)).toHaveLength(3);
    expect(JSON.parse(redacted).url).toBe('?%74%69cket=[REDACTED]#x');
    expect(redactLogLine('{"msg":"no secret, lastEventId=3"}')).toBe('{"msg":"no secret, lastEventId=3"}');
  });

  it('is applied by every process logger to whatever is logged (an error quoting a URL included)', () => {
    const lines: string[] = [];
    const { logger } = createProcessLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, 'api', false, { write: (line: string) => void lines.push(line) });
    logger.error({ err: new Error(`fetch /v1/events?ticket=${TICKET} failed`), url: `/v1/events?ticket=${TICKET}` }, `opening /v1/events?ticket=${TICKET}`);
    logger.child({ part: 'x' }).warn(`ticket=${TICKET}`);
    expect(lines).toHaveLength(2);
    expect(lines.join('')).not.toContain(TICKET);
    expect(JSON.parse(lines[0]!).err.message).toBe('fetch /v1/events?ticket=[REDACTED] failed');
  });
});
