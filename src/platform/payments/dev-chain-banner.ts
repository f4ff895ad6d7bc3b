import type { Payments } from "./payments.ts";
import { formatUsd } from "./prices.ts";

/**
 * What `patchbay serve` prints when it runs the local chain: everything an agent needs to pay.
 * The payer key is anvil's public test key (account #1), worthless outside this chain.
 */
export function devChainBanner(payments: Payments, baseUrl: string): string[] {
  if (payments.kind !== "ready" || !payments.devChain) return [];
  const chain = payments.devChain;
  return [
    "  x402 dev chain (anvil; test money, reset on every start)",
    `  RPC URL:         ${chain.rpcUrl}   (${chain.network})`,
    `  Test USDC:       ${chain.usdcAddress}`,
    `  Demo payer:      ${chain.payer.address}   (1000 test USDC)`,
    `  Payer key:       ${chain.payer.privateKey}   (anvil account #1)`,
    `  Paid to:         ${payments.payTo}`,
    `  Prices:          read ${formatUsd(payments.prices.read)}, signup ${formatUsd(payments.prices.signup)}, remediation ${formatUsd(payments.prices.remediation)}`,
    `  Catalog:         ${baseUrl}/x402   (and ${baseUrl}/llms.txt)`,
    "  Try an agent:",
    `    PATCHBAY_URL=${baseUrl} AGENT_PRIVATE_KEY=${chain.payer.privateKey} npm run example:agent`,
    "",
  ];
}
