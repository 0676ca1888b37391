import { describe, expect, it } from 'vitest';
import { InsufficientLiquidityError } from './errors.ts';
import {
  LedgerInvariantError, ZERO_BALANCES, applyOperation, applyOperations, available, fits, type AdBalances, type LedgerOperation,
} from './ledger.ts';
import { seededRandom as random } from '../test/support/seeded-random.ts';

const sum = (b: AdBalances) => available(b) + b.reserved + b.locked + b.withdrawing + b.paidOut;

/** What each operation moves, written out independently of ledger.ts: [from, to] per amount. */
const MOVES: Record<Exclude<LedgerOperation['op'], 'withdraw' | 'close' | 'fund'>, [keyof AdBalances | 'available', keyof AdBalances | 'available']> = {
  reserve: ['available', 'reserved'],
  release: ['reserved', 'available'],
  lock: ['reserved', 'locked'],
  payOut: ['locked', 'paidOut'],
  returnLock: ['locked', 'available'],
  hold: ['available', 'withdrawing'],
  free: ['withdrawing', 'available'],
};

/** The model's view: the five visible terms (available included). */
const view = (b: AdBalances) => ({ available: available(b), reserved: b.reserved, locked: b.locked, withdrawing: b.withdrawing, paidOut: b.paidOut, pool: b.pool });

function expectedView(b: AdBalances, operation: LedgerOperation): ReturnType<typeof view> {
  const v = view(b);
  switch (operation.op) {
    case 'fund': return { ...v, pool: v.pool + operation.amount, available: v.available + operation.amount };
    case 'withdraw': return { ...v, withdrawing: v.withdrawing - operation.held, paidOut: v.paidOut + operation.amount, available: v.available + operation.held - operation.amount };
    case 'close': return { ...v, available: 0n, withdrawing: 0n, paidOut: v.paidOut + v.available + v.withdrawing };
    default: {
      const [from, to] = MOVES[operation.op];
      return { ...v, [from]: v[from] - operation.amount, [to]: v[to] + operation.amount };
    }
  }
}

const OPS = ['fund', 'reserve', 'release', 'lock', 'payOut', 'returnLock', 'hold', 'free', 'withdraw', 'close'] as const;

function operation(op: (typeof OPS)[number], amount: bigint, held: bigint): LedgerOperation {
  if (op === 'close') return { op };
  if (op === 'withdraw') return { op, amount, held };
  return { op, amount };
}

/** Every balance with each term in 0..2 that satisfies the invariant. */
function smallBalances(): AdBalances[] {
  const all: AdBalances[] = [];
  const r = [0n, 1n, 2n];
  for (const reserved of r) for (const locked of r) for (const withdrawing of r) for (const paidOut of r) for (const free of r) {
    all.push({ pool: reserved + locked + withdrawing + paidOut + free, reserved, locked, withdrawing, paidOut });
  }
  return all;
}

describe('the ad ledger', () => {
  it('moves exactly what each operation names, or refuses, for every small balance and amount', () => {
    let checked = 0;
    for (const b of smallBalances()) {
      for (const op of OPS) {
        for (const amount of [0n, 1n, 2n, 3n]) {
          for (const held of op === 'withdraw' ? [0n, 1n, 2n, 3n] : [0n]) {
            const o = operation(op, amount, held);
            const expected = expectedView(b, o);
            const possible = Object.values(expected).every((x) => x >= 0n);
            const where = `${JSON.stringify(view(b), (_k, x) => (typeof x === 'bigint' ? x.toString() : x))} ${JSON.stringify(o, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))}`;
            if (possible) expect(view(applyOperation(b, o)), where).toEqual(expected);
            else if (op === 'reserve' || op === 'hold') expect(() => applyOperation(b, o), where).toThrow(InsufficientLiquidityError);
            else expect(() => applyOperation(b, o), where).toThrow(LedgerInvariantError);
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(10_000);
  });

  it('keeps pool = available + reserved + locked + withdrawing + paid out over long random sequences, the pool growing only by funds', () => {
    const seed = 20261124;
    const next = random(seed);
    for (let run = 0; run < 100; run++) {
      let b = ZERO_BALANCES;
      let funded = 0n;
      let paid = 0n;
      for (let step = 0; step < 150; step++) {
        const op = OPS[Math.floor(next() * OPS.length)]!;
        const amount = BigInt(Math.floor(next() * 50));
        const o = operation(op, amount, BigInt(Math.floor(next() * 50)));
        let after: AdBalances;
        try {
          after = applyOperation(b, o);
        } catch (error) {
          expect(error instanceof InsufficientLiquidityError || error instanceof LedgerInvariantError, `seed ${seed} run ${run} step ${step}`).toBe(true);
          continue; // refused: the balances stay as they were (pure: nothing to undo)
        }
        expect(fits(after), `seed ${seed} run ${run} step ${step}`).toBe(true);
        expect(after.paidOut >= b.paidOut, 'paid out never shrinks').toBe(true);
        if (o.op === 'fund') funded += o.amount;
        paid = after.paidOut;
        b = after;
        expect(b.pool).toBe(funded);
        expect(sum(b)).toBe(b.pool);
      }
      expect(paid).toBe(b.paidOut);
    }
  });

  it('gives a trade back exactly what it reserved: reserve then release, or reserve, lock and pay out', () => {
    const funded = applyOperation(ZERO_BALANCES, { op: 'fund', amount: 1000n });
    expect(applyOperations(funded, [{ op: 'reserve', amount: 100n }, { op: 'release', amount: 100n }])).toEqual(funded);
    const settled = applyOperations(funded, [{ op: 'reserve', amount: 100n }, { op: 'lock', amount: 100n }, { op: 'payOut', amount: 100n }]);
    expect(view(settled)).toEqual({ pool: 1000n, available: 900n, reserved: 0n, locked: 0n, withdrawing: 0n, paidOut: 100n });
  });

  it('refuses to reserve or hold more than is available, naming both amounts', () => {
    const funded = applyOperation(ZERO_BALANCES, { op: 'fund', amount: 10n });
    expect(() => applyOperation(funded, { op: 'reserve', amount: 11n })).toThrow(/11 exceeds the available balance 10/);
    const held = applyOperation(funded, { op: 'hold', amount: 10n });
    expect(() => applyOperation(held, { op: 'reserve', amount: 1n })).toThrow(InsufficientLiquidityError);
  });

  it('closes an ad keeping only what is locked for trades', () => {
    const b = applyOperations(ZERO_BALANCES, [
      { op: 'fund', amount: 100n }, { op: 'reserve', amount: 10n }, { op: 'lock', amount: 10n }, { op: 'hold', amount: 30n },
    ]);
    expect(view(applyOperation(b, { op: 'close' }))).toEqual({ pool: 100n, available: 0n, reserved: 0n, locked: 10n, withdrawing: 0n, paidOut: 90n });
  });
});
