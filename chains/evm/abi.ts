import { Interface } from 'ethers';

/**
 * The events and views of AdManager and OrderPortal the service reads (contracts/evm/src are
 * the reference implementation; a production contract must emit the same signatures).
 */
export const AD_MANAGER_ABI = [
  'event AdCreated(bytes32 indexed adId, bytes32 indexed reqHash, address indexed creator, address token, uint256 ' +
    'amount, uint256 orderChainId, bytes32 adRecipient)',
  'event AdFunded(bytes32 indexed adId, bytes32 indexed reqHash, uint256 amount, uint256 available)',
  'event AdWithdrawn(bytes32 indexed adId, bytes32 indexed reqHash, uint256 amount, address to)',
  'event AdClosed(bytes32 indexed adId, bytes32 indexed reqHash, uint256 amount, address to)',
  'event OrderLocked(bytes32 indexed orderHash, bytes32 indexed reqHash, bytes32 indexed adId, uint256 amount)',
  'event OrderUnlocked(bytes32 indexed orderHash, bytes32 indexed reqHash, uint256 indexed nullifierHash, address recipient, uint256 amount)',
  'event LockReleased(bytes32 indexed orderHash, bytes32 indexed adId, uint256 amount)',
] as const;

export const ORDER_PORTAL_ABI = [
  'event OrderCreated(bytes32 indexed orderHash, bytes32 indexed reqHash, uint256 indexed leafIndex, uint256 leaf, uint256 secretCommitment, uint256 root)',
  'event OrderUnlocked(bytes32 indexed orderHash, bytes32 indexed reqHash, uint256 indexed nullifierHash, address recipient, uint256 amount)',
  'event OrderRefunded(bytes32 indexed orderHash, address recipient, uint256 amount)',
  'function currentRoot() view returns (uint256)',
  'function nextLeafIndex() view returns (uint256)',
  'function isKnownRoot(uint256 root) view returns (bool)',
] as const;

/** The Order struct argument of the order calls (contracts/evm/src/RelayerRequests.sol; chains/order-struct.ts ORDER_FIELDS). */
const ORDER_TUPLE =
  'tuple(bytes32 orderChainToken, bytes32 adChainToken, uint256 orderAmount, uint256 adAmount, bytes32 bridger, ' +
    'bytes32 orderRecipient, bytes32 adId, bytes32 adCreator, bytes32 adRecipient, uint256 salt, uint256 ' +
    'orderChainId, bytes32 orderPortal, uint256 adChainId, bytes32 adManager, uint256 lockExpiry, uint256 ' +
    'refundTime) o';

/** The signature checked on every signed call: the relayer's request (chains/signed-call-data.ts). */
const SIGNED = 'bytes32 authToken, uint256 deadline, bytes signature';

/**
 * The AdManager functions a client calls: the signed actions (chains/evm/call-args.ts assembles
 * their arguments) and the timeout `releaseLock`. test/trades/client-trade.test.ts holds them against the
 * compiled contract.
 */
export const AD_MANAGER_FUNCTIONS = [
  `function createAd(bytes32 adId, address adToken, uint256 initialAmount, uint256 orderChainId, bytes32 adRecipient, ${SIGNED}) payable`,
  `function fundAd(bytes32 adId, uint256 amount, ${SIGNED}) payable`,
  `function withdrawFromAd(bytes32 adId, uint256 amount, address to, ${SIGNED})`,
  `function closeAd(bytes32 adId, address to, ${SIGNED})`,
  `function lockForOrder(${ORDER_TUPLE}, ${SIGNED})`,
  `function unlock(${ORDER_TUPLE}, uint256 nullifierHash, uint256 targetRoot, bytes proof, ${SIGNED})`,
  `function releaseLock(${ORDER_TUPLE})`,
] as const;

/** The OrderPortal functions a client calls: the deposit, the unlock, and the timeout `refund`. */
export const ORDER_PORTAL_FUNCTIONS = [
  `function createOrder(${ORDER_TUPLE}, uint256 secretCommitment, ${SIGNED}) payable`,
  `function unlock(${ORDER_TUPLE}, uint256 nullifierHash, uint256 targetRoot, bytes proof, ${SIGNED})`,
  `function refund(${ORDER_TUPLE})`,
] as const;

/** One interface over both contracts' events (OrderUnlocked has the same signature on both). */
export const BRIDGE_INTERFACE = new Interface([
  ...AD_MANAGER_ABI,
  ...ORDER_PORTAL_ABI.filter((entry) => !entry.startsWith('event OrderUnlocked')),
]);

/** Names of the events a confirmation can expect. */
export type BridgeEventName =
  | 'AdCreated'
  | 'AdFunded'
  | 'AdWithdrawn'
  | 'AdClosed'
  | 'OrderLocked'
  | 'OrderCreated'
  | 'OrderUnlocked'
  /** Timeouts (no relayer request, so no reqHash): the Maker's lock released, the Bridger's deposit refunded. */
  | 'LockReleased'
  | 'OrderRefunded';

/** Which event proves each signed action happened (the action names of chains/request-schema.ts). */
export const EVENT_OF_ACTION = {
  createAd: 'AdCreated',
  fundAd: 'AdFunded',
  withdrawFromAd: 'AdWithdrawn',
  closeAd: 'AdClosed',
  createOrder: 'OrderCreated',
  lockForOrder: 'OrderLocked',
  unlock: 'OrderUnlocked',
} as const satisfies Record<string, BridgeEventName>;

/**
 * Which event proves each timeout happened (chains/evm/call-args.ts `TimeoutAction`): calls anyone
 * may make after an order's time is up, with no relayer request, so their events carry no reqHash
 * (on Soroban only two topics: the name and the orderHash).
 */
export const EVENT_OF_TIMEOUT = {
  refund: 'OrderRefunded',
  releaseLock: 'LockReleased',
} as const satisfies Record<string, BridgeEventName>;

/** The events no relayer request causes: no reqHash among their arguments or topics. */
export const TIMEOUT_EVENTS: ReadonlySet<BridgeEventName> = new Set(Object.values(EVENT_OF_TIMEOUT));
