import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { parseOrThrow } from './validation.ts';

describe('parseOrThrow', () => {
  const schema = z.strictObject({ amount: z.string({ error: 'must be a string' }), note: z.string().optional() });
  const messages = (input: unknown) => {
    try {
      parseOrThrow(schema, input);
    } catch (error) {
      return (error as AppError).messages;
    }
    return [];
  };

  it('says a missing field is required', () => {
    expect(messages({})).toEqual(['amount is required']);
  });

  it('says a wrongly typed field is wrong, not missing', () => {
    expect(messages({ amount: 5 })).toEqual(['amount must be a string']);
  });

  it('gives a validation failure the VALIDATION_FAILED code in a 422 body', () => {
    try {
      parseOrThrow(schema, {});
      expect.unreachable();
    } catch (error) {
      expect((error as AppError).toBody()).toEqual({ statusCode: 422, message: ['amount is required'], error: 'Unprocessable Entity', code: 'VALIDATION_FAILED', retryable: false });
    }
  });

  it('names unknown fields', () => {
    expect(messages({ amount: '1', sneaky: true })).toEqual(['unknown field sneaky']);
  });
});
