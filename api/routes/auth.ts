import { parseOrThrow } from '../validation.ts';
import { Router, type Request, type RequestHandler } from 'express';
import type { AuthService, Challenge } from '../../auth/service.ts';
import type { UserRecord } from '../../db/repositories/users.ts';
import { principalOf } from '../middleware/auth.ts';
import { bearerAuth, registry } from '../openapi/operations.ts';
import {
  challengeBody, challengeResponse, loginResponse, parseWalletProof, refreshBody, refreshResponse, sep10ChallengeQuery,
  sep10ChallengeResponse, sep10TokenBody, sep10TokenResponse, userSchema, walletProofBody,
} from '../schemas/auth.ts';
import { unprocessable } from '../errors.ts';
import { errorResponses } from '../schemas/common.ts';

const json = <T>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
const signInFailed = { 401: { ...errorResponses(401)[401], description: 'Signature does not verify, or the challenge is unknown, used or expired' } };
const FLOW = 'Flow: challenge -> sign locally -> login -> Bearer access token -> refresh when it expires. See auth/README.md.';

registry.registerPath({
  method: 'post', path: '/v1/auth/challenge', operationId: 'createChallenge', tags: ['Auth'], summary: 'Ask for a sign-in challenge for a wallet',
  description: `EVM: returns the SIWE (EIP-4361) \`message\` to sign as a personal message. Stellar: returns a ` +
    `server-signed SEP-10 \`transaction\` to co-sign. Single use, expires at \`expiresAt\`. ${FLOW}`,
  request: { body: { required: true, content: { 'application/json': { schema: challengeBody } } } },
  responses: { 200: json(challengeResponse, 'The challenge'), ...errorResponses(422, 429) },
});
registry.registerPath({
  method: 'post', path: '/v1/auth/login', operationId: 'login', tags: ['Auth'], summary: 'Sign in with a signed challenge',
  description: 'EVM: `{chainKind, message, signature}` with the message exactly as issued. Stellar: `{chainKind, ' +
    'transaction}` co-signed by the account. The first login of a wallet creates its user.',
  request: { body: { required: true, content: { 'application/json': { schema: walletProofBody } } } },
  responses: { 200: json(loginResponse, 'The user and a token pair'), ...errorResponses(401, 422, 429), ...signInFailed },
});
registry.registerPath({
  method: 'post', path: '/v1/auth/refresh', operationId: 'refreshTokens', tags: ['Auth'], summary: 'Exchange a refresh token for a new pair',
  description: 'The refresh token is single use and rotates. Presenting one already used revokes the whole session (401).',
  request: { body: { required: true, content: { 'application/json': { schema: refreshBody } } } },
  responses: {
    200: json(refreshResponse, 'A new token pair'),
    ...errorResponses(401, 422, 429),
    401: {
      ...errorResponses(401)[401],
      description: 'Refresh token invalid, expired, already used (the session is then revoked) or of a revoked session',
    },
  },
});
registry.registerPath({
  method: 'post', path: '/v1/auth/link', operationId: 'linkWallet', tags: ['Auth'], summary: "Link a wallet of the other chain kind to the caller's user",
  description: 'Body as for login, signed by the wallet to link (ask a challenge for it first). No new tokens: the ' +
    'existing ones now stand for both wallets. 409 when the chain kind is already linked or the address belongs to ' +
    'another user.',
  security: [{ [bearerAuth.name]: [] }],
  request: { body: { required: true, content: { 'application/json': { schema: walletProofBody } } } },
  responses: { 200: json(userSchema, 'The updated user'), ...errorResponses(401, 409, 422, 429) },
});
registry.registerPath({
  method: 'post', path: '/v1/auth/logout', operationId: 'logout', tags: ['Auth'], summary: "End the caller's session",
  description: 'Revokes the session of the Bearer access token: that access token and every refresh token of the ' +
    'session stop working at once (401). Other sessions of the same user are untouched. No body.',
  security: [{ [bearerAuth.name]: [] }],
  responses: { 204: { description: 'The session is ended' }, ...errorResponses(401, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/auth/me', operationId: 'getCurrentUser', tags: ['Auth'], summary: "The caller's user and wallets",
  description: 'The user of the Bearer access token, with every wallet linked to it.',
  security: [{ [bearerAuth.name]: [] }],
  responses: { 200: json(userSchema, 'The user'), ...errorResponses(401, 429) },
});

registry.registerPath({
  method: 'get', path: '/v1/auth/sep10', operationId: 'getSep10Challenge', tags: ['Auth'], summary: 'SEP-10 challenge (the standard web-auth endpoint)',
  description: "Stellar wallets' standard sign-in (SEP-10), the WEB_AUTH_ENDPOINT of /.well-known/stellar.toml: the " +
    "same challenge as POST /v1/auth/challenge for a STELLAR account, in SEP-10's shape. Co-sign it and POST it back " +
    "here, or to /v1/auth/login.",
  request: { query: sep10ChallengeQuery },
  responses: { 200: json(sep10ChallengeResponse, 'The challenge'), ...errorResponses(422, 429) },
});
registry.registerPath({
  method: 'post', path: '/v1/auth/sep10', operationId: 'getSep10Token', tags: ['Auth'], summary: 'SEP-10 token for a co-signed challenge',
  description: 'Verifies the co-signed challenge exactly as POST /v1/auth/login does and opens the same kind of ' +
    'session; answers SEP-10\'s `{token}` (the access JWT) and the refresh token. The body may also be a form ' +
    '(application/x-www-form-urlencoded), as SEP-10 allows.',
  request: {
    body: {
      required: true,
      content: { 'application/json': { schema: sep10TokenBody }, 'application/x-www-form-urlencoded': { schema: sep10TokenBody } },
    },
  },
  responses: { 200: json(sep10TokenResponse, 'A session'), ...errorResponses(401, 422, 429), ...signInFailed },
});

/** The Host header a request reached the service with (SEP-10 domains follow it in development). */
const reachedHost = (req: Request): string | undefined => req.get('host');

/** /v1/auth/*: challenge, login, refresh (public), link, logout and me (Bearer); SEP-10's own shape at /v1/auth/sep10. */
export function authRouter({ auth, requireAuth }: { auth: AuthService; requireAuth: RequestHandler }, router: Router = Router()): Router {
  router.post('/auth/challenge', (async (req, res) => {
    res.json(presentChallenge(await auth.issueChallenge(parseOrThrow(challengeBody, req.body), reachedHost(req))));
  }));
  router.post('/auth/login', (async (req, res) => {
    const { user, tokens } = await auth.login(parseWalletProof(req.body));
    res.json({ user: presentUser(user), tokens });
  }));
  router.get('/auth/sep10', (async (req, res) => {
    const query = parseOrThrow(sep10ChallengeQuery, req.query);
    const server = await auth.sep10Server(reachedHost(req));
    const unsupported = [
      ...(query.home_domain !== undefined && query.home_domain.toLowerCase() !== server.homeDomain
        ? [`home_domain must be ${server.homeDomain}, this service's home domain`]
        : []),
      ...(query.client_domain !== undefined ? ['client_domain is not supported: this service verifies no client domain'] : []),
      ...(query.memo !== undefined ? ['memo is not supported: sign in with the account itself'] : []),
    ];
    if (unsupported.length > 0) throw unprocessable(unsupported);
    const challenge = await auth.issueChallenge({ chainKind: 'STELLAR', address: query.account }, reachedHost(req));
    if (!('transaction' in challenge)) throw new Error('a Stellar account got a challenge of another kind');
    res.json({ transaction: challenge.transaction, network_passphrase: challenge.networkPassphrase });
  }));
  router.post('/auth/sep10', (async (req, res) => {
    const { transaction } = parseOrThrow(sep10TokenBody, req.body);
    const { tokens } = await auth.login({ chainKind: 'STELLAR', transaction });
    res.json({ token: tokens.access, refresh: tokens.refresh });
  }));
  router.post('/auth/refresh', (async (req, res) => {
    const { refresh } = parseOrThrow(refreshBody, req.body);
    res.json({ tokens: await auth.refresh(refresh) });
  }));
  router.post('/auth/link', requireAuth, (async (req, res) => {
    res.json(presentUser(await auth.link(principalOf(req), parseWalletProof(req.body))));
  }));
  router.post('/auth/logout', requireAuth, (async (req, res) => {
    await auth.logout(principalOf(req));
    res.status(204).end();
  }));
  router.get('/auth/me', requireAuth, (async (req, res) => {
    res.json(presentUser(await auth.currentUser(principalOf(req).userId)));
  }));
  return router;
}

function presentUser(user: UserRecord) {
  return {
    id: user.id,
    wallets: user.wallets.map((w) => ({ address: w.address, chainKind: w.chainKind, createdAt: w.createdAt.toISOString() })),
    createdAt: user.createdAt.toISOString(),
  };
}

function presentChallenge(challenge: Challenge) {
  if ('message' in challenge) {
    const { chainKind, address, nonce, domain, uri, expiresAt, message } = challenge;
    return { chainKind, address, nonce, domain, uri, expiresAt: expiresAt.toISOString(), message };
  }
  const { chainKind, address, transaction, networkPassphrase, expiresAt } = challenge;
  return { chainKind, address, transaction, networkPassphrase, expiresAt: expiresAt.toISOString() };
}
