/**
 * The clock every time-based decision of trades/ reads: injected (tests and benchmarks move it), the
 * wall clock only here, so nothing else in trades/ asks the system for the time.
 */
export type Clock = () => number;

/** Milliseconds since the epoch, from the system. */
export const systemClock: Clock = () => Date.now();
