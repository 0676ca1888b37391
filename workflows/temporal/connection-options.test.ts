import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { startTemporalDevServer, stopped, type DevServer } from '../../test/support/temporal-stack.ts';
import { temporalConnectOptions } from './connection-options.ts';

/**
 * The TEMPORAL_TLS_* settings end to end. The dev server (`temporal server start-dev` 1.9) has no
 * TLS options, so a TLS front that requires a client certificate signed by the test CA (as a
 * frontend with mTLS does) forwards to it: the SDK's client and worker connections must verify
 * the server by the CA and the name, and present the pair, or be refused.
 */

let dir: string;
let server: DevServer;
let front: tls.Server;
let address: string;

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'temporal-tls-'));
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=test ca');
  for (const [name, cn] of [['server', 'temporal.test'], ['client', 'relayer']] as const) {
    writeFileSync(path.join(dir, `${name}.ext`), name === 'server' ? 'subjectAltName=DNS:temporal.test\n' : 'extendedKeyUsage=clientAuth\n');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`);
  }
  server = await startTemporalDevServer(inject('temporalCli'));
  const [host, port] = server.address.split(':') as [string, string];
  const read = (file: string) => readFileSync(path.join(dir, file));
  front = tls.createServer({ key: read('server.key'), cert: read('server.crt'), ca: read('ca.crt'), requestCert: true, rejectUnauthorized: true, ALPNProtocols: ['h2'] }, (socket) => {
    const upstream = net.connect(Number(port), host);
    socket.pipe(upstream).pipe(socket);
    const close = () => { socket.destroy(); upstream.destroy(); };
    socket.on('error', close);
    upstream.on('error', close);
  });
  front.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${(front.address() as net.AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  front?.close();
  if (server) await stopped(server.process);
  rmSync(dir, { recursive: true, force: true });
});

const settings = (extra: Record<string, string> = {}) => loadConfig({
  TEMPORAL_ADDRESS: address, TEMPORAL_TLS_CA: path.join(dir, 'ca.crt'), TEMPORAL_TLS_SERVER_NAME: 'temporal.test', ...extra,
});
const pair = () => ({ TEMPORAL_TLS_CERT: path.join(dir, 'client.crt'), TEMPORAL_TLS_KEY: path.join(dir, 'client.key') });

describe('Temporal over mTLS with the TEMPORAL_TLS_* settings', () => {
  it('the client (api, backlog sampler) and the worker connection (worker, prover) reach the server through it', async () => {
    const client = await Connection.connect({ ...temporalConnectOptions(settings(pair())), connectTimeout: 10_000 });
    try {
      const info = await client.workflowService.getSystemInfo({});
      expect(info.serverVersion).toMatch(/^\d+\.\d+/);
    } finally {
      await client.close();
    }
    const worker = await NativeConnection.connect(temporalConnectOptions(settings(pair())));
    try {
      expect((await worker.workflowService.getSystemInfo({})).serverVersion).toMatch(/^\d+\.\d+/);
    } finally {
      await worker.close();
    }
  }, 60_000);

  it('is refused without the client pair, with a wrong server name, or in clear text', async () => {
    const attempts = [
      temporalConnectOptions(settings()),
      temporalConnectOptions(settings({ ...pair(), TEMPORAL_TLS_SERVER_NAME: 'other.test' })),
      { address },
    ];
    for (const options of attempts) {
      await expect(Connection.connect({ ...options, connectTimeout: 3_000 }).then(async (c) => {
        try { await c.withDeadline(Date.now() + 3_000, () => c.workflowService.getSystemInfo({})); } finally { await c.close(); }
      }), JSON.stringify({ ...options, tls: options.tls && Object.keys(options.tls) })).rejects.toThrow();
    }
  }, 60_000);
});
