/** The two chain families the relayer bridges between. */
export const CHAIN_KINDS = ['EVM', 'STELLAR'] as const;
export type ChainKind = (typeof CHAIN_KINDS)[number];

/** The all-zero EVM address: how the spec writes a native token's address. */
export const NATIVE_TOKEN_ADDRESS = '0x0000000000000000000000000000000000000000';
