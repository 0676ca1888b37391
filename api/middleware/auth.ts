import type { Request, RequestHandler } from 'express';
import { Passport } from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import jwt from 'jsonwebtoken';
import { SignInRejected } from '../../auth/errors.ts';
import type { AuthService, Principal } from '../../auth/sign-in.ts';
import { JWT_ALGORITHMS, readClaims } from '../../auth/tokens.ts';
import { unauthorized } from '../errors.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    /** What `requireAuth` puts on `req.user`: the caller's user id, session and wallets by chain kind. */
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface User extends Principal {}
  }
}

export type { Principal };

/**
 * Builds `requireAuth`: a passport-jwt strategy over `Authorization: Bearer <access token>`
 * (HS256 only, issuer, audience, expiry), then the `typ: access` claim, then a live session
 * in the database. On success `req.user` is the `Principal`; otherwise a 401 in the spec's body
 * saying whether the token is missing, expired, of the wrong type or invalid.
 */
export function createRequireAuth(auth: AuthService): RequestHandler {
  const passport = new Passport();
  passport.use('jwt', new JwtStrategy(
    {
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: auth.tokens.secret,
      algorithms: JWT_ALGORITHMS,
      issuer: auth.tokens.issuer,
      audience: auth.tokens.audience,
    },
    (payload: unknown, done: (error: unknown, user?: Principal | false, info?: unknown) => void) => {
      let claims;
      try {
        claims = readClaims(payload, 'access');
      } catch (error) {
        done(null, false, error);
        return;
      }
      auth.principal(claims.userId, claims.sessionId).then(
        (principal) => done(null, principal ?? false, principal ? undefined : new SignInRejected('session was revoked or reached its maximum age: sign in again')),
        (error: unknown) => done(error),
      );
    },
  ));

  return (req, res, next) => {
    passport.authenticate('jwt', { session: false }, (error: unknown, user: Principal | false, info: unknown) => {
      if (error) return next(error);
      if (!user) return next(unauthorized(reason(req, info)));
      req.user = user;
      next();
    })(req, res, next);
  };
}

function reason(req: Request, info: unknown): string {
  if (info instanceof SignInRejected) return info.message;
  if (info instanceof jwt.TokenExpiredError) return 'access token expired';
  if (info instanceof jwt.JsonWebTokenError || info instanceof jwt.NotBeforeError) return 'access token is invalid';
  return req.headers.authorization ? 'Authorization header must be "Bearer <access token>"' : 'missing Authorization: Bearer <access token>';
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
  const token = ExtractJwt.fromAuthHeaderAsBearerToken()(req);
  const exp = token ? (jwt.decode(token) as { exp?: unknown } | null)?.exp : undefined;
  return typeof exp === 'number' ? new Date(exp * 1000) : undefined;
}
