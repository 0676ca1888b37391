import { STATUS_CODES } from 'node:http';

/** The spec's error body. `message` is a list for validation failures. */
export interface ErrorBody {
  statusCode: number;
  message: string | string[];
  error: string;
}

/**
 * The one error type the API throws on purpose. Anything else that reaches the error middleware is
 * an unexpected failure and becomes a bare 500.
 */
export class AppError extends Error {
  readonly status: number;
  readonly messages: string | string[];

  constructor(status: number, message: string | string[], options?: { cause?: unknown }) {
    super(Array.isArray(message) ? message.join('; ') : message, options);
    this.status = status;
    this.messages = message;
  }

  toBody(): ErrorBody {
    return errorBody(this.status, this.messages);
  }
}

/** Builds the spec's error body for a status; `error` is the standard status name. */
export function errorBody(status: number, message: string | string[]): ErrorBody {
  return { statusCode: status, message, error: STATUS_CODES[status] ?? 'Error' };
}

export const badRequest = (message: string | string[]) => new AppError(400, message);
export const unauthorized = (message = 'authentication required') => new AppError(401, message);
export const forbidden = (message: string) => new AppError(403, message);
export const notFound = (message: string) => new AppError(404, message);
export const conflict = (message: string) => new AppError(409, message);
export const unprocessable = (messages: string[]) => new AppError(422, messages);
