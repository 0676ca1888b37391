import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { isDatabaseUnavailableError } from '../../db/unavailable.ts';
import { DomainError, type ErrorKind } from '../../domain/index.ts';
import { isErrorCode, type ErrorCode } from '../error-codes.ts';
import { AppError, errorBody } from '../errors.ts';
import { allowedMethods, literalPathMethods } from '../openapi/paths.ts';

function methodNotAllowed(req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1], allowed: string[]): void {
  res.setHeader('Allow', allowed.join(', '));
  res.status(405).json(errorBody(405, `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`, 'METHOD_NOT_ALLOWED'));
}

/**
 * Before the routers: a path the document names literally asked with a method it does not list is
 * 405 with `Allow` (GET /v1/ads/create), not taken by a parameterised route as an id (which would
 * answer 422 "id must be a UUID").
 */
export const wrongMethodOnLiteralPath: RequestHandler = (req, res, next) => {
  const allowed = literalPathMethods(req.path);
  if (allowed && !allowed.includes(req.method)) methodNotAllowed(req, res, allowed);
  else next();
};

/** Unknown path: 404; known path with another method: 405 with `Allow`. */
export const notFoundHandler: RequestHandler = (req, res) => {
  const allowed = allowedMethods(req.path);
  if (allowed.length > 0) {
    methodNotAllowed(req, res, allowed);
    return;
  }
  res.status(404).json(errorBody(404, `no route for ${req.method} ${req.path}`, 'ROUTE_NOT_FOUND'));
};

/** The one place domain errors become HTTP statuses. */
const STATUS_OF_KIND: Record<ErrorKind, number> = {
  invalid: 422,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  not_ready: 409,
  limited: 429,
  unavailable: 503,
};

/** body-parser's error types and the status each maps to. */
const BODY_ERRORS: Record<string, { status: number; message: string; code?: ErrorCode }> = {
  'entity.parse.failed': { status: 400, message: 'body is not valid JSON', code: 'INVALID_JSON' },
  'entity.too.large': { status: 413, message: 'body is too large' },
  'encoding.unsupported': { status: 415, message: 'body encoding is not supported' },
  'charset.unsupported': { status: 415, message: 'body charset is not supported' },
  'request.aborted': { status: 400, message: 'request was aborted' },
  'request.size.invalid': { status: 400, message: 'body length does not match Content-Length' },
  'parameters.too.many': { status: 413, message: 'too many parameters' },
};

/**
 * Turns anything thrown into the spec's error body. `AppError`s carry their status, `DomainError`s
 * map by kind (retryable ones add `Retry-After`); PostgreSQL unreachable is 503; body-parser's
 * errors map by type; anything else is a bug: logged with the request id, answered as a bare 500.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    if (err instanceof AppError) {
      // A dependency out (the rate-limit counters' database): the same request later can succeed.
      if (err.status === 503) res.setHeader('Retry-After', '2');
      res.status(err.status).json(err.toBody());
      return;
    }
    if (err instanceof DomainError) {
      const status = STATUS_OF_KIND[err.kind];
      if (status >= 500) logger.warn({ err, reqId: req.id }, 'dependency unavailable');
      if (err.retryable || err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds ?? 2));
      // The domain's own code when registered (a client acts on it), else the status's generic one.
      const code = isErrorCode(err.code) ? err.code : undefined;
      res.status(status).json(errorBody(status, err.kind === 'invalid' ? [err.message] : err.message, code));
      return;
    }
    // PostgreSQL down or restarting: retry later, as for any unavailable dependency.
    if (isDatabaseUnavailableError(err)) {
      logger.warn({ err, reqId: req.id }, 'database unavailable');
      res.setHeader('Retry-After', '2');
      res.status(503).json(errorBody(503, 'the database is unavailable; retry later', 'DATABASE_UNAVAILABLE'));
      return;
    }
    const bodyError = typeof err?.type === 'string' ? BODY_ERRORS[err.type] : undefined;
    if (bodyError) {
      res.status(bodyError.status).json(errorBody(bodyError.status, bodyError.message, bodyError.code));
      return;
    }
    // URIError from a malformed percent-encoding in the path, reported by the router.
    if (err instanceof URIError || err?.status === 400) {
      res.status(400).json(errorBody(400, 'malformed request'));
      return;
    }
    logger.error({ err, reqId: req.id }, 'unhandled error');
    res.status(500).json(errorBody(500, 'internal server error', 'INTERNAL'));
  };
}
