import { HDNodeWallet, Mnemonic } from 'ethers';

/** Anvil's default mnemonic: its ten funded development accounts derive from it. Public, devnet only. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

/** A development account of anvil: index 0 deploys the contracts, the others are free for users and tests. */
export interface DevAccount {
  address: string;
  privateKey: string;
}

/** Anvil's first `count` accounts (m/44'/60'/0'/0/i of its mnemonic), each funded with 10 000 ETH at start. */
export function anvilAccounts(count = 10): DevAccount[] {
  const mnemonic = Mnemonic.fromPhrase(ANVIL_MNEMONIC);
  return Array.from({ length: count }, (_, i) => {
    const wallet = HDNodeWallet.fromMnemonic(mnemonic, `m/44'/60'/0'/0/${i}`);
    return { address: wallet.address, privateKey: wallet.privateKey };
  });
}
