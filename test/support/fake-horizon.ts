import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An account as the double serves it: its signers and thresholds (the rest of the record is filler). */
export interface HorizonAccount {
  signers: { key: string; weight: number; type?: string }[];
  thresholds: { low: number; medium: number; high: number };
}

/**
 * A loopback server answering Horizon's `GET /accounts/:id` in Horizon's own JSON format (fields,
 * nesting and 404 problem document as a live Horizon returns them), for tests: no Horizon runs here.
 * Accounts not in `accounts` answer 404; `failWith` makes every request answer that status.
 */
export interface HorizonDouble {
  url: string;
  accounts: Map<string, HorizonAccount>;
  failWith?: number;
  /** Account ids asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

function accountRecord(id: string, account: HorizonAccount) {
  return {
    _links: { self: { href: `/accounts/${id}` } },
    id,
    account_id: id,
    sequence: '120259084288',
    sequence_ledger: 28,
    sequence_time: '1732270000',
    subentry_count: account.signers.length - 1,
    last_modified_ledger: 28,
    last_modified_time: '2026-11-22T10:00:00Z',
    thresholds: { low_threshold: account.thresholds.low, med_threshold: account.thresholds.medium, high_threshold: account.thresholds.high },
    flags: { auth_required: false, auth_revocable: false, auth_immutable: false, auth_clawback_enabled: false },
    balances: [{ balance: '9999.9999800', buying_liabilities: '0.0000000', selling_liabilities: '0.0000000', asset_type: 'native' }],
    signers: account.signers.map((s) => ({ weight: s.weight, key: s.key, type: s.type ?? 'ed25519_public_key' })),
    num_sponsoring: 0,
    num_sponsored: 0,
    paging_token: id,
  };
}

const NOT_FOUND = {
  type: 'https://stellar.org/horizon-errors/not_found',
  title: 'Resource Missing',
  status: 404,
  detail: 'The resource at the url requested was not found.  This usually occurs for one of two reasons:  The url requested is not valid, or no data in our database could be found with the parameters provided.',
};

/** Starts the double on a free loopback port. */
export async function startHorizonDouble(): Promise<HorizonDouble> {
  const double: Omit<HorizonDouble, 'url' | 'close'> = { accounts: new Map(), requests: [] };
  const server: Server = createServer((req, res) => {
    const match = /^\/accounts\/([^/?]+)/.exec(req.url ?? '');
    const send = (status: number, body: object, type = 'application/hal+json; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(JSON.stringify(body));
    };
    if (double.failWith) return send(double.failWith, { type: 'https://stellar.org/horizon-errors/server_error', title: 'Internal Server Error', status: double.failWith }, 'application/problem+json; charset=utf-8');
    if (!match) return send(404, NOT_FOUND, 'application/problem+json; charset=utf-8');
    const id = decodeURIComponent(match[1]!);
    double.requests.push(id);
    const account = double.accounts.get(id);
    if (!account) return send(404, NOT_FOUND, 'application/problem+json; charset=utf-8');
    send(200, accountRecord(id, account));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(double, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as HorizonDouble;
}
