import type { Address, Hex } from "viem";

// What the dev chain's start (dev-chain.ts) and its viem side (dev-chain-deploy.ts) both know.

/**
 * anvil's well-known development mnemonic. Its accounts are public knowledge and funded only
 * on local chains: #0 deploys the token and is the in-process facilitator, #1 is the demo payer.
 */
export const DEV_MNEMONIC = "test test test test test test test test test test test junk";
export const DEV_CHAIN_ID = 31337;
/** What the demo payer starts with on every start of the chain (it keeps no state): 1,000 USDC. */
export const DEMO_PAYER_FUNDS = 1_000_000_000n;

export type DevAccount = { address: Address; privateKey: Hex };

/**
 * TestUSDC's address on a fresh chain: account #0's first deployment (its nonce 0), the address
 * anvil's and Hardhat's documentation show for a first contract (dev-chain.test.ts computes it
 * again). A load must find the token here; a deployment elsewhere is not saved.
 */
export const TOKEN_ADDRESS: Address = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
