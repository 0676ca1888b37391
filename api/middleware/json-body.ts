import express, { type RequestHandler } from 'express';
import { AppError, unprocessable } from '../errors.ts';

/** Methods whose body the API reads. */
const WITH_BODY = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** True when the request carries body bytes (a chunked body, or a Content-Length above 0). */
function carriesBody(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = Number(headers['content-length']);
  return Number.isFinite(length) && length > 0;
}

/**
 * Request bodies are JSON objects, and only that: a body in another media type is 415 (not a 422
 * saying a field is missing because nothing was parsed); JSON that is not an object (an array, a
 * string, null) is 422 naming `body`; JSON that does not parse stays 400 and a body over `limit` 413
 * (api/middleware/errors.ts). `formPaths` also take application/x-www-form-urlencoded. In place of
 * a bare `express.json()`.
 */
export function jsonBodies(limit: string, formPaths: readonly string[] = []): RequestHandler {
  const forms = new Set(formPaths);
  const mediaType: RequestHandler = (req, _res, next) => {
    if (forms.has(req.path) && req.is('application/x-www-form-urlencoded')) {
      next();
      return;
    }
    if (WITH_BODY.has(req.method) && carriesBody(req.headers) && !req.is(['application/json', 'application/*+json'])) {
      const received = JSON.stringify(String(req.headers['content-type'] ?? 'none').slice(0, 100));
      next(new AppError(415, `Content-Type must be application/json (received ${received})`));
      return;
    }
    next();
  };
  // Not strict: any JSON value parses, so the one check below answers every non-object with the same 422.
  const parse = express.json({ limit, strict: false, type: ['application/json', 'application/*+json'] });
  // Only on `formPaths` (SEP-10's token endpoint, which the standard lets wallets post as a form).
  const parseForm = express.urlencoded({ limit, extended: false, parameterLimit: 10 });
  const form: RequestHandler = (req, res, next) => (forms.has(req.path) ? parseForm(req, res, next) : next());
  const objectOnly: RequestHandler = (req, _res, next) => {
    const body: unknown = req.body;
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
      next(unprocessable([`body must be a JSON object, received ${body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`}`]));
      return;
    }
    next();
  };
  const steps = [mediaType, parse, form, objectOnly];
  // One layer, not four: every request walks the app's layers, and the read path's requests carry
  // no body. Without body bytes (type-is's `hasBody`, which the parsers ask) no step would act.
  return (req, res, next) => {
    if (!hasBody(req.headers)) {
      next();
      return;
    }
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined || index === steps.length) return next(error);
      steps[index++]!(req, res, step);
    };
    step();
  };
}

/** type-is's `hasBody`, which body-parser asks before reading: a Transfer-Encoding, or any Content-Length (0 included). */
function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(headers['content-length'] ?? Number.NaN));
}
