import { describe, expect, it } from 'vitest';
import { TRADE_STATUSES } from '../../domain/index.ts';
import { depositRequestVerdict } from './deposit-request.ts';

describe('depositRequestVerdict', () => {
  const deadline = '1800000000';

  it('gives the kept request while PENDING and before its deadline, with the seconds left', () => {
    expect(depositRequestVerdict('PENDING', deadline, 1_800_000_000 - 600)).toEqual({ give: true, secondsLeft: 600 });
    expect(depositRequestVerdict('PENDING', deadline, 1_800_000_000 - 1)).toEqual({ give: true, secondsLeft: 1 });
  });

  it('refuses it as expired from its deadline on (the contract refuses it then)', () => {
    expect(depositRequestVerdict('PENDING', deadline, 1_800_000_000)).toEqual({ give: false, why: 'expired' });
    expect(depositRequestVerdict('PENDING', deadline, 1_800_000_001)).toEqual({ give: false, why: 'expired' });
  });

  it('refuses it once the deposit was made, whatever the time, and as expired once the reservation ran out', () => {
    for (const status of TRADE_STATUSES) {
      for (const now of [1_700_000_000, 1_900_000_000]) {
        const verdict = depositRequestVerdict(status, deadline, now);
        if (status === 'PENDING') continue;
        expect(verdict, status).toEqual({ give: false, why: status === 'EXPIRED' ? 'expired' : 'deposited' });
      }
    }
  });

  it('refuses a PENDING trade whose request was not kept, rather than signing another', () => {
    expect(depositRequestVerdict('PENDING', null, 1_700_000_000)).toEqual({ give: false, why: 'not-kept' });
  });
});
