import type { ChainKind } from './chain-kind.ts';

/**
 * The authenticated caller, as every use case sees it: its user, its session, and that user's
 * wallet address per chain kind (what ownership checks compare). auth/ issues it; ads/ and trades/
 * only read it, so it lives in the shared vocabulary rather than in auth/.
 */
export interface Principal {
  userId: string;
  sessionId: string;
  wallets: Partial<Record<ChainKind, string>>;
}
