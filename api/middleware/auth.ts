import type { Request, RequestHandler } from 'express';
import { SignInRejected } from '../../auth/errors.ts';
import type { AuthService, Principal } from '../../auth/service.ts';
import { AppError, unauthorized } from '../errors.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** What `requireAuth` puts here: the caller's user id, session and wallets by chain kind. */
      user?: Principal;
      /** When the access token `requireAuth` verified expires (its `exp`, read by that one verification). */
      accessTokenExpiresAt?: Date;
    }
  }
}

export type { Principal };

/** `Authorization: Bearer <token>` (the scheme in any case, RFC 7235), or why not. */
function bearerToken(req: Request): { token: string } | { missing: string } {
  const header = req.headers.authorization;
  if (!header) return { missing: 'missing Authorization: Bearer <access token>' };
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return match ? { token: match[1]! } : { missing: 'Authorization header must be "Bearer <access token>"' };
}

/**
 * Builds `requireAuth`: the bearer access token verified by the one JWT path of the service
 * (`auth.authenticate`: auth/tokens.ts `verifyToken`, HS256 only, issuer, audience, expiry, `typ:
 * access`, the same code that verifies refresh tokens), then a live session in the database. On
 * success `req.user` is the `Principal`; otherwise a 401 in the spec's body saying whether the
 * token is missing, expired, of the wrong type or invalid, or the session is over.
 */
export function createRequireAuth(auth: Pick<AuthService, 'authenticate'>): RequestHandler {
  return (req, _res, next) => {
    // Already verified for this request (the Idempotency-Key step runs it before the route).
    if (req.user) return next();
    const bearer = bearerToken(req);
    if ('missing' in bearer) return next(unauthorized(bearer.missing));
    auth.authenticate(bearer.token).then(
      ({ principal, expiresAt }) => {
        req.user = principal;
        req.accessTokenExpiresAt = expiresAt;
        next();
      },
      // An expired access token keeps its own code: the client refreshes rather than signs in again.
      (error: unknown) => next(
        error instanceof SignInRejected ? new AppError(
          401,
          error.message,
          { code: error.code === 'TOKEN_EXPIRED' ? 'TOKEN_EXPIRED' : 'UNAUTHENTICATED' },
        ) : error,
      ),
    );
  };
}

/** The caller set by `requireAuth`; throws 401 if the route forgot to require it. */
export function principalOf(req: Request): Principal {
  if (!req.user) throw unauthorized();
  return req.user;
}

/**
 * When the caller's access token (already verified by `requireAuth`) expires: a long-lived
 * response such as an event stream ends then, so it never outlives the credential that opened it.
 */
export function accessTokenExpiry(req: Request): Date | undefined {
  return req.accessTokenExpiresAt;
}
