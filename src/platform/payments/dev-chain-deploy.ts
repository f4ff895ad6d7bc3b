import { pbkdf2Sync } from "node:crypto";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  type Hex,
  http,
  toHex,
} from "viem";
import { HDKey, hdKeyToAccount } from "viem/accounts";
import {
  DEMO_PAYER_FUNDS,
  DEV_CHAIN_ID,
  DEV_MNEMONIC,
  type DevAccount,
  TOKEN_ADDRESS,
} from "./dev-chain-constants.ts";
import type { ContractArtifact } from "./test-usdc.ts";

// The dev chain's viem side: what only a deployment, the in-process facilitator or a test needs,
// loaded with them rather than at every start (viem is most of the payments code).

export const evmChain = (id: number, name: string, rpcUrl: string) =>
  defineChain({
    id,
    name,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });

/**
 * The mnemonic's BIP-39 root key, derived once with Node's native PBKDF2: viem's
 * `mnemonicToAccount` runs the 2,048 PBKDF2 rounds in JavaScript, about 0.1 s each time.
 */
let devRoot: HDKey | undefined;
const devRootKey = (): HDKey => {
  devRoot ??= HDKey.fromMasterSeed(
    pbkdf2Sync(DEV_MNEMONIC.normalize("NFKD"), "mnemonic", 2048, 64, "sha512"),
  );
  return devRoot;
};

/** Account `index` of DEV_MNEMONIC (m/44'/60'/0'/0/index), funded with 10,000 ETH by anvil. */
export function deriveDevAccount(index: number): DevAccount {
  const account = hdKeyToAccount(devRootKey(), { addressIndex: index });
  const key = account.getHdKey().privateKey;
  if (!key) throw new Error(`no private key for dev account #${index}`);
  return { address: account.address, privateKey: toHex(key) };
}

/**
 * Deploys TestUSDC from account #0 and mints the demo payer's funds, then hands anvil's state to
 * `save` for the next start. anvil holds account #0 unlocked: it signs the deployment and the
 * mint itself (eth_sendTransaction), so a start does no elliptic-curve work of its own.
 */
export async function deployToken(args: {
  rpcUrl: string;
  artifact: ContractArtifact;
  facilitator: DevAccount;
  payer: DevAccount;
  /** anvil_dumpState's answer (gzip-compressed JSON, hex-encoded). */
  save: (dumped: Hex) => void;
}): Promise<Address> {
  const { rpcUrl, artifact } = args;
  const chain = evmChain(DEV_CHAIN_ID, "patchbay dev chain", rpcUrl);
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl) });
  const wallet = createWalletClient({ account: args.facilitator.address, chain, transport: http(rpcUrl) });
  const deployment = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode });
  const { contractAddress: deployed } = await publicClient.waitForTransactionReceipt({ hash: deployment });
  if (!deployed) throw new Error("TestUSDC deployment produced no contract address");
  const usdcAddress = getAddress(deployed);
  const mint = await wallet.writeContract({
    address: usdcAddress,
    abi: artifact.abi,
    functionName: "mint",
    args: [args.payer.address, DEMO_PAYER_FUNDS],
  });
  const minted = await publicClient.waitForTransactionReceipt({ hash: mint });
  if (minted.status !== "success") throw new Error("minting the demo payer's test USDC failed");
  // Only a chain a later start can stand for is saved: its token where a load expects it.
  if (usdcAddress === TOKEN_ADDRESS) {
    args.save((await publicClient.request({ method: "anvil_dumpState" } as never)) as Hex);
  }
  return usdcAddress;
}
