import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, getContractAddress, http } from "viem";
import { afterAll, expect, test } from "vitest";
import { anvilChildOf, exited } from "../../../test/lib/processes.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { type DevChain, devAccount, prepareDevChain, startDevChain } from "./dev-chain.ts";
import { TOKEN_ADDRESS } from "./dev-chain-constants.ts";
import { deriveDevAccount } from "./dev-chain-deploy.ts";
import { loadTestUsdc } from "./test-usdc.ts";

const scratch = mkdtempSync(join(tmpdir(), "patchbay-dev-chain-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** Stands for an install without dist/dev-chain: these starts compile, deploy and save themselves. */
const nothingInstalled = join(scratch, "nothing-installed");

test("the dev chain's well-known accounts are the mnemonic's #0 and #1, and the token is #0's first deployment", () => {
  for (const index of [0, 1] as const) expect(devAccount(index)).toEqual(deriveDevAccount(index));
  expect(devAccount(0).address).not.toBe(devAccount(1).address);
  expect(TOKEN_ADDRESS).toBe(getContractAddress({ from: devAccount(0).address, nonce: 0n }));
});

/** What a start's chain holds: the token's code, the payer's funds, what account #0 has sent. */
async function chainState(chain: DevChain) {
  const client = createPublicClient({ transport: http(chain.rpcUrl) });
  const { abi } = loadTestUsdc(join(scratch, "cache"));
  return {
    code: await client.getCode({ address: chain.usdcAddress }),
    payerFunds: await client.readContract({
      address: chain.usdcAddress,
      abi,
      functionName: "balanceOf",
      args: [chain.payer.address],
    }),
    sent: await client.getTransactionCount({ address: chain.facilitator.address }),
  };
}

test("a later start loads the chain the first one deployed, and a state it cannot read is deployed again", async () => {
  const cacheDir = join(scratch, "cache");
  const first = await startDevChain({ port: 0, cacheDir, installedDir: nothingInstalled });
  const deployed = await chainState(first).finally(() => first.stop());
  expect(deployed.payerFunds).toBe(1_000_000_000n);
  expect(deployed.sent).toBe(2);
  const saved = readdirSync(cacheDir).filter((name) => name.startsWith("dev-chain-"));
  expect(saved).toHaveLength(1);

  const second = await startDevChain({ port: 0, cacheDir, installedDir: nothingInstalled });
  expect(second.usdcAddress).toBe(first.usdcAddress);
  expect(await chainState(second).finally(() => second.stop())).toEqual(deployed);

  writeFileSync(join(cacheDir, saved[0] as string), "{ not a chain state");
  const third = await startDevChain({ port: 0, cacheDir, installedDir: nothingInstalled });
  expect(await chainState(third).finally(() => third.stop())).toEqual(deployed);
});

test("the install's artifacts are made once, other versions' removed, and a start with an empty cache loads them", async () => {
  const installed = join(scratch, "installed");
  mkdirSync(installed);
  const stale = "dev-chain-0000000000000000.json";
  writeFileSync(join(installed, stale), "{}");
  expect(await prepareDevChain(installed)).toBe(true);
  const made = readdirSync(installed).sort();
  expect(made).toEqual([
    expect.stringMatching(/^TestUSDC-[0-9a-f]{16}\.json$/),
    expect.stringMatching(/^dev-chain-[0-9a-f]{16}\.json$/),
  ]);
  expect(made).not.toContain(stale);
  expect(await prepareDevChain(installed)).toBe(false);
  // A state anvil cannot load is made again by the next install, not kept.
  const state = made.find((name) => name.startsWith("dev-chain-")) as string;
  writeFileSync(join(installed, state), "{ not a chain state");
  expect(await prepareDevChain(installed)).toBe(true);
  expect(await prepareDevChain(installed)).toBe(false);

  // A first start: the deployed chain, with nothing compiled, deployed or saved in its own cache.
  const cacheDir = join(scratch, "first-start-cache");
  const chain = await startDevChain({ port: 0, cacheDir, installedDir: installed });
  expect(chain.usdcAddress).toBe(TOKEN_ADDRESS);
  expect(await chainState(chain).finally(() => chain.stop())).toEqual({
    code: expect.stringMatching(/^0x60/),
    payerFunds: 1_000_000_000n,
    sent: 2,
  });
  expect(existsSync(cacheDir)).toBe(false);
});

test("a process killed outright takes its anvil with it: the next start finds the port free", async () => {
  // A process of its own that starts a chain and is then SIGKILLed: no exit handler runs.
  const script = `
    const { startDevChain } = await import(${JSON.stringify(new URL("./dev-chain.ts", import.meta.url).href)});
    const chain = await startDevChain({ port: 0, cacheDir: ${JSON.stringify(join(scratch, "cache"))} });
    console.log(chain.rpcUrl);
    setInterval(() => {}, 60_000);
  `;
  const owner = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const rpcUrl = await new Promise<string>((resolve, reject) => {
      owner.stdout.setEncoding("utf8").once("data", (line: string) => resolve(line.trim()));
      owner.once("exit", (code) =>
        reject(new Error(`the chain's process ended (${code}) before its chain listened`)),
      );
    });
    const anvil = anvilChildOf(owner.pid as number);
    expect(exited(anvil)).toBe(false);
    owner.kill("SIGKILL");
    // The kernel delivers the parent-death signal as the owner dies; anvil's exit follows it.
    await eventually(
      async () => exited(anvil) || undefined,
      15_000,
      `anvil (pid ${anvil}) to exit after its owner was killed`,
    );
    await expect(fetch(rpcUrl, { method: "POST" })).rejects.toThrow();
  } finally {
    owner.kill("SIGKILL");
  }
});
