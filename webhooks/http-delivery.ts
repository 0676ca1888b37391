import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPrivateAddress } from './url-policy.ts';

export interface DeliveryAttempt {
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface DeliveryOptions {
  /** The whole attempt (connect, send, answer) may take this long; then it fails and the socket is destroyed. */
  timeoutMs: number;
  /** Refuse to connect to private, loopback and reserved addresses (production). */
  publicOnly: boolean;
}

/** At most this much of a receiver's answer is read (only its status matters). */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Resolves like dns.lookup, but refuses private addresses: the check is on the address actually connected to. */
const publicLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses as unknown as LookupAddress[];
    const bad = list.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(Object.assign(new Error(`${hostname} resolves to a private address (${bad.address})`), { code: 'EPRIVATE' }), '', 0);
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};

/**
 * POSTs one signed delivery. A 2xx answer is a success; anything else, a timeout or a connection
 * error is a failure with the reason. Never throws; never holds more than `timeoutMs` or reads more
 * than 64 KiB of the answer, so a slow or chatty receiver costs a worker nothing more.
 */
export function postWebhook(url: string, headers: Record<string, string>, body: string, options: DeliveryOptions): Promise<DeliveryAttempt> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const done = (attempt: Omit<DeliveryAttempt, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...attempt, durationMs: elapsed() });
    };
    let request: http.ClientRequest;
    try {
      const target = new URL(url);
      const client = target.protocol === 'https:' ? https : http;
      request = client.request(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'cross-chain-relayer-webhooks/1', ...headers },
        agent: false,
        ...(options.publicOnly ? { lookup: publicLookup } : {}),
      });
    } catch (error) {
      resolve({ succeeded: false, statusCode: null, error: (error as Error).message, durationMs: elapsed() });
      return;
    }
    const timer = setTimeout(() => {
      request.destroy();
      done({ succeeded: false, statusCode: null, error: `no answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) response.destroy();
      });
      const finish = () => {
        request.destroy();
        done(status >= 200 && status < 300
          ? { succeeded: true, statusCode: status, error: null }
          : { succeeded: false, statusCode: status, error: `answered ${status}` });
      };
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
    });
    request.on('error', (error) => done({ succeeded: false, statusCode: null, error: error.message }));
    request.end(body);
  });
}
