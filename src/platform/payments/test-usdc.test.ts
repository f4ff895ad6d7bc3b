import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  parseSignature,
  serializeSignature,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { test as base, describe, expect } from "vitest";
import { type DevChain, startDevChain } from "./dev-chain.ts";
import { deriveDevAccount } from "./dev-chain-deploy.ts";
import { loadTestUsdc } from "./test-usdc.ts";

const cacheDir = join(tmpdir(), "patchbay-contracts");
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const authorizationTypes = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

type Authorization = {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

const test = base.extend<{ chain: DevChain }>({
  chain: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their deps by destructuring
    async ({}, use) => {
      const chain = await startDevChain({ port: 0, cacheDir });
      await use(chain);
      await chain.stop();
    },
    { scope: "file" },
  ],
});

function token(chain: DevChain) {
  const { abi } = loadTestUsdc(cacheDir);
  const reader = createPublicClient({ transport: http(chain.rpcUrl) });
  const payer = privateKeyToAccount(chain.payer.privateKey);
  const relayer = createWalletClient({
    account: privateKeyToAccount(deriveDevAccount(4).privateKey),
    transport: http(chain.rpcUrl),
  });
  const domain = {
    name: "USD Coin",
    version: "2",
    chainId: chain.chainId,
    verifyingContract: chain.usdcAddress,
  };
  const sign = (message: Authorization) =>
    payer.signTypedData({
      domain,
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message,
    });
  const authorization = (overrides: Partial<Authorization> = {}): Authorization => {
    const now = BigInt(Math.floor(Date.now() / 1000));
    return {
      from: payer.address,
      to: deriveDevAccount(3).address,
      value: 1_000n,
      validAfter: now - 600n,
      validBefore: now + 600n,
      nonce: toHex(randomBytes(32)),
      ...overrides,
    };
  };
  const args = (a: Authorization) => [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;
  /** Runs transferWithAuthorization(v, r, s) as `eth_call`; resolves to the revert reason or "ok". */
  const tryTransfer = async (a: Authorization, signature: Hex): Promise<string> => {
    const { r, s, v } = parseSignature(signature);
    try {
      await reader.simulateContract({
        account: relayer.account,
        address: chain.usdcAddress,
        abi,
        functionName: "transferWithAuthorization",
        args: [...args(a), Number(v), r, s],
      });
      return "ok";
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };
  const transfer = async (a: Authorization, signature: Hex) => {
    const hash = await relayer.writeContract({
      chain: null,
      address: chain.usdcAddress,
      abi,
      functionName: "transferWithAuthorization",
      args: [...args(a), signature],
    });
    return reader.waitForTransactionReceipt({ hash });
  };
  const read = <T>(functionName: string, fnArgs: readonly unknown[]) =>
    reader.readContract({ address: chain.usdcAddress, abi, functionName, args: fnArgs }) as Promise<T>;
  return { abi, reader, relayer, sign, authorization, tryTransfer, transfer, read };
}

describe("TestUSDC (EIP-3009)", () => {
  test("speaks USDC's EIP-712 domain and 6 decimals", async ({ chain }) => {
    const t = token(chain);
    expect(await t.read("name", [])).toBe("USD Coin");
    expect(await t.read("version", [])).toBe("2");
    expect(await t.read("decimals", [])).toBe(6);
    expect(await t.read("balanceOf", [chain.payer.address])).toBe(1_000_000_000n);
  });

  test("an authorization moves the funds once, then its nonce is spent", async ({ chain }) => {
    const t = token(chain);
    const a = t.authorization();
    const signature = await t.sign(a);
    const before = await t.read<bigint>("balanceOf", [a.to]);

    expect((await t.transfer(a, signature)).status).toBe("success"); // the bytes-signature overload
    expect(await t.read<bigint>("balanceOf", [a.to])).toBe(before + a.value);
    expect(await t.read("authorizationState", [a.from, a.nonce])).toBe(true);
    expect(await t.tryTransfer(a, signature)).toContain("authorization is used or canceled");
  });

  test("refuses the malleable twin of a valid signature", async ({ chain }) => {
    const t = token(chain);
    const a = t.authorization();
    const { r, s, yParity } = parseSignature(await t.sign(a));
    const twin = serializeSignature({
      r,
      s: toHex(SECP256K1_N - BigInt(s), { size: 32 }),
      yParity: yParity ? 0 : 1,
    });
    expect(await t.tryTransfer(a, twin)).toContain("invalid signature 's' value");
  });

  test("refuses expired, not-yet-valid, altered and foreign-signed authorizations", async ({ chain }) => {
    const t = token(chain);
    // The simulated call runs at the latest block's time, which lags the wall clock by however long
    // the chain has been idle, so "expired" is measured against the chain's own clock.
    const now = (await t.reader.getBlock()).timestamp;
    const expired = t.authorization({ validBefore: now });
    expect(await t.tryTransfer(expired, await t.sign(expired))).toContain("authorization is expired");
    const early = t.authorization({ validAfter: now + 3_600n });
    expect(await t.tryTransfer(early, await t.sign(early))).toContain("authorization is not yet valid");
    const signed = t.authorization();
    expect(await t.tryTransfer({ ...signed, value: signed.value * 2n }, await t.sign(signed))).toContain(
      "invalid signature",
    );
    const foreign = t.authorization({ from: deriveDevAccount(5).address });
    expect(await t.tryTransfer(foreign, await t.sign(foreign))).toContain("invalid signature");
  });

  test("receiveWithAuthorization can only be submitted by the payee", async ({ chain }) => {
    const t = token(chain);
    const a = t.authorization();
    const signature = await t.sign(a); // a transfer authorization is not a receive authorization either
    await expect(
      t.reader.simulateContract({
        account: t.relayer.account,
        address: chain.usdcAddress,
        abi: t.abi,
        functionName: "receiveWithAuthorization",
        args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature],
      }),
    ).rejects.toThrow(/caller must be the payee/);
  });

  test("only the deployer mints", async ({ chain }) => {
    const t = token(chain);
    await expect(
      t.reader.simulateContract({
        account: t.relayer.account,
        address: chain.usdcAddress,
        abi: t.abi,
        functionName: "mint",
        args: [t.relayer.account.address, 1n],
      }),
    ).rejects.toThrow(/not the minter/);
  });
});
