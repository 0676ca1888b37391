import { STATUS_CODES } from 'node:http';
import { genericCode, isRetryable, type ErrorCode } from './error-codes.ts';

/**
 * The spec's error body, plus `code`: a stable machine code from api/error-codes.ts that clients
 * branch on, and `retryable`: whether the same request may succeed later (`isRetryable`). `message`
 * is a list for validation failures.
 */
export interface ErrorBody {
  statusCode: number;
  message: string | string[];
  error: string;
  code: ErrorCode;
  retryable: boolean;
}

/**
 * The one error type the API throws on purpose. Anything else that reaches the error middleware is
 * an unexpected failure and becomes a bare 500.
 */
export class AppError extends Error {
  readonly status: number;
  readonly messages: string | string[];
  readonly code: ErrorCode;

  /** `options.code` defaults to the status's generic code. */
  constructor(status: number, message: string | string[], options?: { cause?: unknown; code?: ErrorCode }) {
    super(Array.isArray(message) ? message.join('; ') : message, options);
    this.status = status;
    this.messages = message;
    this.code = options?.code ?? genericCode(status);
  }

  toBody(): ErrorBody {
    return errorBody(this.status, this.messages, this.code);
  }
}

/**
 * Builds the spec's error body for a status; `error` is the standard status name, `code` the given
 * one or the status's generic code, so every error body carries one.
 */
export function errorBody(status: number, message: string | string[], code: ErrorCode = genericCode(status)): ErrorBody {
  return { statusCode: status, message, error: STATUS_CODES[status] ?? 'Error', code, retryable: isRetryable(code) };
}

export const badRequest = (message: string | string[]) => new AppError(400, message);
export const unauthorized = (message = 'authentication required') => new AppError(401, message);
export const forbidden = (message: string) => new AppError(403, message);
/** 404; `code` the resource's own (AD_NOT_FOUND, TRADE_NOT_FOUND, ...) where a client tells them apart. */
export const notFound = (message: string, code?: ErrorCode) => new AppError(404, message, code ? { code } : undefined);
export const conflict = (message: string) => new AppError(409, message);
export const unprocessable = (messages: string[], options?: { code?: ErrorCode }) => new AppError(422, messages, options);
