/** The test setup's cargo builds, as chains of cargo argument lists (scripts/prebuild-cargo.mjs). */
export declare const CARGO_CHAINS: Record<string, string[][]>;
