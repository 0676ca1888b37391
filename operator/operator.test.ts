import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserve } from '../ads/port.ts';
import { AdStateError } from '../ads/errors.ts';
import { errorHandler } from '../api/middleware/errors.ts';
import { loadConfig } from '../config/config.ts';
import { findAd } from '../db/repositories/ads.ts';
import { createNotifications } from '../db/notifications.ts';
import { setSwitch } from '../db/repositories/operator.ts';
import { start, type RunningService } from '../entrypoints/service.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { insertAd, insertRouteWithChains } from '../test/support/fixtures.ts';
import { terminateBackends } from '../test/support/pushed-listeners.ts';
import { SigningStoppedError } from './errors.ts';
import { parseOperatorArgs } from './cli.ts';
import { createSigningSwitch } from './signing-switch.ts';

/**
 * The operator's controls, end to end: the real command line (`npm run operator`'s script) against a real
 * database, and two api services on that database, each reading the switch on its own.
 */

const root = path.resolve(import.meta.dirname, '..');
let db: TestDatabase;
const apis: RunningService[] = [];
let dataDir: string;

/** `npm run operator -- <args>` as the script runs it (tsx operator/cli.ts), with an explicit minimal environment. */
function operator(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'operator/cli.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: dataDir, DATABASE_URL: db.url, OPERATOR_NAME: 'on-call' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code: code ?? -1, output }));
  });
}

/** Whether each api's signer refuses a signature right now (the seam every signed response passes). */
async function refusing(): Promise<boolean[]> {
  return Promise.all(apis.map(async (api) => {
    try {
      await api.container.signers.signer.signEvmDigest(`0x${'11'.repeat(32)}`);
      return false;
    } catch (error) {
      if (error instanceof SigningStoppedError) return true;
      throw error;
    }
  }));
}

/** Polls until every api's answer is `want`; returns the milliseconds it took, or throws naming what it waited for. */
async function untilAll(want: boolean, limitMs: number): Promise<number> {
  const began = performance.now();
  for (;;) {
    const now = await refusing();
    if (now.every((r) => r === want)) return performance.now() - began;
    if (performance.now() - began > limitMs) throw new Error(`waited ${limitMs} ms for every api to ${want ? 'refuse' : 'sign'}: ${JSON.stringify(now)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-operator-'));
  for (const name of ['api-1', 'api-2']) {
    const config = loadConfig({
      NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, DATA_DIR: path.join(dataDir, name), LOG_LEVEL: 'silent',
      BOOKS_AUDIT_CRON: 'off', RETENTION_CRON: 'off', STELLAR_DEVNET: 'off', DEVNET: 'off',
    });
    apis.push(await start(config, pino({ level: 'silent' }), { migrate: false }));
  }
}, 120_000);

afterAll(async () => {
  for (const api of apis) await api.stop();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('stop-signing and resume-signing', () => {
  it('every api process refuses every signature within 5 s of stop-signing, signs again within 5 s of resume-signing, and both are audited', async () => {
    expect(await refusing()).toEqual([false, false]);
    const stop = await operator(['stop-signing', '--reason', 'HSM key suspected leaked, INC-42', '--by', 'alice']);
    expect(stop.output, stop.output).toMatch(/signing stopped/);
    expect(stop.code).toBe(0);
    const stoppedAfter = await untilAll(true, 5_000);
    // Public keys still answer: the service keeps saying who it is.
    for (const api of apis) await expect(api.container.signers.signer.evmAddress()).resolves.toMatch(/^0x[0-9a-fA-F]{40}$/);
    const resume = await operator(['resume-signing', '--reason', 'keys rotated, INC-42 closed', '--by', 'alice']);
    expect(resume.code, resume.output).toBe(0);
    const resumedAfter = await untilAll(false, 5_000);
    console.info(`stop reached both api processes in ${stoppedAfter.toFixed(0)} ms, resume in ${resumedAfter.toFixed(0)} ms`);
    const audit = await db.knex('operator_actions').orderBy('id').select('action', 'subject', 'actor', 'reason', 'created_at');
    expect(audit.map(({ created_at: _at, ...row }) => row)).toEqual([
      { action: 'stop-signing', subject: null, actor: 'alice', reason: 'HSM key suspected leaked, INC-42' },
      { action: 'resume-signing', subject: null, actor: 'alice', reason: 'keys rotated, INC-42 closed' },
    ]);
    const status = await operator(['status']);
    expect(JSON.parse(status.output)).toMatchObject({ signingStopped: false, lastActions: [{ action: 'resume-signing' }, { action: 'stop-signing' }] });
  }, 60_000);

  it('a stop made while every api process\'s LISTEN connection was down reaches each within 5 s of its reconnecting (it reads the switch again)', async () => {
    const listeners = async () => (await db.knex.raw(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN operator_switches' AND pid <> pg_backend_pid()",
    )).rows.map((row: { pid: number }) => row.pid) as number[];
    const before = await listeners();
    expect(before).toHaveLength(apis.length);
    await terminateBackends(db.knex, before);
    // The notification of this stop reaches no api process: their connections are gone (they reconnect after 1 s).
    await setSwitch(db.knex, 'signing_stopped', true, { action: 'stop-signing', actor: 'test', reason: 'drill: stop during a failover' });
    try {
      await untilAll(true, 5_000);
      await expect.poll(async () => (await listeners()).filter((pid) => !before.includes(pid)).length, { timeout: 10_000 }).toBe(apis.length);
    } finally {
      await setSwitch(db.knex, 'signing_stopped', false, { action: 'resume-signing', actor: 'test', reason: 'drill over' });
    }
    await untilAll(false, 5_000);
  }, 60_000);

  it('a change nobody announced (the table written by hand) is read by the next safety read', async () => {
    const notifications = createNotifications(db.knex);
    const signing = createSigningSwitch(db.knex, pino({ level: 'silent' }), notifications, 200);
    try {
      await signing.start();
      expect(signing.stopped()).toBe(false);
      await db.knex('operator_switches').where({ name: 'signing_stopped' }).update({ engaged: true });
      await expect.poll(() => signing.stopped(), { timeout: 5_000, message: 'the safety read to see the hand-written stop' }).toBe(true);
      await db.knex('operator_switches').where({ name: 'signing_stopped' }).update({ engaged: false });
      await expect.poll(() => signing.stopped(), { timeout: 5_000, message: 'the safety read to see the hand-written resume' }).toBe(false);
    } finally {
      signing.close();
      await notifications.close();
      await db.knex('operator_switches').where({ name: 'signing_stopped' }).update({ engaged: false });
    }
  });

  it('a refused signature is answered 503 SIGNING_STOPPED with Retry-After by the API\'s error middleware', async () => {
    const app = express();
    app.get('/signed', () => { throw new SigningStoppedError(); });
    app.use(errorHandler(pino({ level: 'silent' })));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/signed`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('60');
      expect(await res.json()).toEqual({
        statusCode: 503, error: 'Service Unavailable', code: 'SIGNING_STOPPED',
        message: 'the operator has stopped signing: no signed request is issued until it is resumed; retry later', retryable: true,
      });
    } finally {
      server.close();
    }
  });

  it('a process started while signing is stopped refuses from its first request', async () => {
    await setSwitch(db.knex, 'signing_stopped', true, { action: 'stop-signing', actor: 'test', reason: 'drill: start while stopped' });
    const config = loadConfig({
      NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, DATA_DIR: path.join(dataDir, 'api-3'), LOG_LEVEL: 'silent',
      BOOKS_AUDIT_CRON: 'off', RETENTION_CRON: 'off', STELLAR_DEVNET: 'off', DEVNET: 'off',
    });
    const third = await start(config, pino({ level: 'silent' }), { migrate: false });
    try {
      await expect(third.container.signers.signer.signStellar(Buffer.alloc(32, 1))).rejects.toThrow(SigningStoppedError);
    } finally {
      await third.stop();
      await setSwitch(db.knex, 'signing_stopped', false, { action: 'resume-signing', actor: 'test', reason: 'drill over' });
    }
  }, 60_000);
});

describe('pause-ad and resume-ad', () => {
  it('pauses an ad (no new trade; a hold recording what it was), resumes it to the status it had, audited with who and why', async () => {
    const route = await insertRouteWithChains(db.knex);
    const adId = await insertAd(db.knex, route);
    const paused = await operator(['pause-ad', adId, '--reason', 'books drift on this ad, INC-43', '--by', 'bob']);
    expect(paused.code, paused.output).toBe(0);
    expect((await findAd(db.knex, adId))!.baseStatus).toBe('PAUSED');
    const reservation = { adId, amount: 1n, what: '1', lapsed: { adId, answers: new Map() }, closeCutoff: new Date(Date.now() - 60_000) };
    await expect(db.knex.transaction((trx) => reserve(trx, reservation))).rejects.toThrow(AdStateError);
    expect(await db.knex('operator_ad_holds').where({ ad_id: adId }).first('previous_status', 'actor')).toEqual({ previous_status: 'ACTIVE', actor: 'bob' });
    const resumed = await operator(['resume-ad', adId, '--reason', 'drift explained: late OrderUnlocked']);
    expect(resumed.code, resumed.output).toBe(0);
    expect((await findAd(db.knex, adId))!.baseStatus).toBe('ACTIVE');
    const again = await operator(['resume-ad', adId, '--reason', 'twice by mistake']);
    expect(again.code).toBe(1);
    expect(again.output).toContain(`ad ${adId} is not paused by the operator`);
    const audit = await db.knex('operator_actions').where({ subject: adId }).orderBy('id').select('action', 'actor', 'reason');
    expect(audit).toEqual([
      { action: 'pause-ad', actor: 'bob', reason: 'books drift on this ad, INC-43' },
      { action: 'resume-ad', actor: 'on-call', reason: 'drift explained: late OrderUnlocked' },
    ]);
  }, 60_000);

  it('refuses a command line without a reason, an unknown command or an ad id that is not one, changing nothing', async () => {
    expect(() => parseOperatorArgs(['stop-signing'], {})).toThrow(/--reason must say why/);
    expect(() => parseOperatorArgs(['halt'], {})).toThrow(/command must be one of stop-signing, resume-signing, pause-ad, resume-ad, status, received 'halt'/);
    expect(() => parseOperatorArgs(['pause-ad', '42', '--reason', 'because'], {})).toThrow(/pause-ad needs the ad's id \(a UUID\), received '42'/);
    expect(parseOperatorArgs(['stop-signing', '--reason', 'an incident'], { OPERATOR_NAME: 'carol' })).toEqual({ command: 'stop-signing', actor: 'carol', reason: 'an incident' });
    const refused = await operator(['stop-signing']);
    expect(refused.code).toBe(1);
    expect(await db.knex('operator_switches').where({ name: 'signing_stopped' }).first('engaged')).toEqual({ engaged: false });
  }, 60_000);
});
