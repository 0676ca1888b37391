import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ContractFactory, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { compileSolidity, SolidityCompileError } from './compile.ts';

const ANVIL_KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

describe('compileSolidity', () => {
  let dir: string;
  let anvil: AnvilInstance;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'solc-test-'));
    mkdirSync(path.join(dir, 'lib'));
    writeFileSync(
      path.join(dir, 'lib', 'Base.sol'),
      '// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\ncontract Base { function base() public pure returns (uint256) { return 40; } }\n',
    );
    writeFileSync(
      path.join(dir, 'Answer.sol'),
      '// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\nimport "./lib/Base.sol";\ncontract Answer is Base { function answer() external pure returns (uint256) { return base() + 2; } }\n',
    );
    writeFileSync(path.join(dir, 'Broken.sol'), 'pragma solidity ^0.8.20; contract Broken { function f( }');
    anvil = await startAnvil({ chainId: 31999 });
  });

  afterAll(async () => {
    await anvil?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('compiles a file with a relative import into bytecode that runs on anvil', async () => {
    const cacheDir = path.join(dir, 'cache');
    const contracts = await compileSolidity(['Answer.sol'], { baseDir: dir, cacheDir });
    expect(Object.keys(contracts).sort()).toEqual(['Answer', 'Base']);
    const provider = new JsonRpcProvider(anvil.rpcUrl, undefined, { staticNetwork: true });
    const wallet = new Wallet(ANVIL_KEY_0, provider);
    const answer = contracts.Answer!;
    const deployed = await new ContractFactory(answer.abi as InterfaceAbi, answer.bytecode, wallet).deploy();
    expect(await (deployed.getFunction('answer')() as Promise<bigint>)).toBe(42n);
    provider.destroy();
  });

  it('serves a second compilation of the same input from the cache', async () => {
    const cacheDir = path.join(dir, 'cache-2');
    const first = await compileSolidity(['Answer.sol'], { baseDir: dir, cacheDir });
    expect(readdirSync(cacheDir)).toHaveLength(1);
    const started = Date.now();
    const second = await compileSolidity(['Answer.sol'], { baseDir: dir, cacheDir });
    expect(second).toEqual(first);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('reports solc errors as SolidityCompileError', async () => {
    await expect(compileSolidity(['Broken.sol'], { baseDir: dir, cacheDir: path.join(dir, 'c3') })).rejects.toThrow(
      SolidityCompileError,
    );
  });
});
