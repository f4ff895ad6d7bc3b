import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  erc20Abi,
  http,
  isAddress,
  parseAbi,
  parseUnits,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { devAccount } from "../../../src/platform/payments/dev-chain.ts";
import { DEV_CHAIN_ID, type DevAccount } from "../../../src/platform/payments/dev-chain-constants.ts";
import { deriveDevAccount } from "../../../src/platform/payments/dev-chain-deploy.ts";
import { freePort, type SpawnedServer, spawnServer } from "../../lib/spawn-server.ts";
import { type DevChainControl, devChainOf } from "./dev-chain-control.ts";
import type { AgentChain, SentPayment } from "./paying-agents.ts";
import type { PgCluster } from "./pg-cluster.ts";

/**
 * A `patchbay serve` that charges on its own dev chain (development mode, as `npm start` runs
 * it: anvil on a port of its own, the in-process facilitator), on a database of its own, with
 * payers funded from the demo payer — and what a test needs to hold its answers to account: the
 * chain (balances, each authorization's state) and the payments table.
 */
export type PaidInstance = {
  server: SpawnedServer;
  chain: DevChainControl;
  /** The network, token and EIP-712 domain the paid routes' challenges name. */
  agentChain: AgentChain;
  payers: DevAccount[];
  /** Each payer's test USDC, in `payers` order. */
  balances(): Promise<bigint[]>;
  /** Whether each payment's EIP-3009 authorization is used on chain, by `paymentKey`. */
  authorizationsUsed(payments: SentPayment[]): Promise<Map<string, boolean>>;
  /** The x402_payments rows, by `paymentKey`. */
  paymentRows(): Promise<Map<string, PaymentRow>>;
  /** Resolves once no payment is claimed (in flight), or after `timeoutMs`. */
  claimsClosed(timeoutMs: number): Promise<void>;
  /** Onboarding sessions the instance created. */
  onboardingSessions(): Promise<number>;
  close(): Promise<void>;
};

export type PaymentRow = {
  payer: string;
  nonce: string;
  state: string;
  transaction: string | null;
  route: string;
};

/** Each payer starts with this much test USDC (a call costs $0.01–$0.05). */
const PAYER_FUNDS = parseUnits("20", 6);

const usdc = parseAbi(["function authorizationState(address authorizer, bytes32 nonce) view returns (bool)"]);

/** The payments table's key for a payment: payer and nonce, lowercase. */
export const paymentKey = (p: SentPayment) => `${p.payer.toLowerCase()}:${p.nonce.toLowerCase()}`;

export async function startPaidInstance(args: {
  cluster: PgCluster;
  database: string;
  kek: string;
  /** Dev accounts to fund as payers: distinct per test, so no two share an account. */
  payerIndexes: number[];
}): Promise<PaidInstance> {
  const url = await args.cluster.createDatabase(args.database);
  const dataDir = await mkdtemp(join(tmpdir(), "patchbay-faults-"));
  const chainPort = await freePort();
  const server = await spawnServer({
    env: {
      DATABASE_URL: url,
      NODE_ENV: "development",
      LOG_LEVEL: "warn",
      PATCHBAY_DATA_DIR: dataDir,
      PATCHBAY_KEK: args.kek,
      PATCHBAY_DEV_CHAIN: "on",
      PATCHBAY_DEV_CHAIN_PORT: String(chainPort),
      // Steady agents on one wallet each: per-key limits would only add 429s to the tables.
      PATCHBAY_RATE_LIMIT_KEY_PER_MINUTE: "0",
      PATCHBAY_RATE_LIMIT_ORG_PER_MINUTE: "0",
    },
    // The first start compiles the test token.
    readyTimeoutMs: 90_000,
  }).catch(async (error: unknown) => {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  const chain = devChainOf(server.pid, chainPort);
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  const reader = createPublicClient({ transport: http(chain.rpcUrl) });
  const close = async () => {
    await server.stop();
    await chain.close();
    await sql.end({ timeout: 1 });
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const agentChain = await challengeAsset(server.baseUrl);
    const asset = agentChain.asset.address;
    const payers = args.payerIndexes.map((index) => deriveDevAccount(index));
    await fund(chain.rpcUrl, asset, payers);
    const openClaims = async () =>
      (await sql<{ n: number }[]>`select count(*)::int as n from x402_payments where state = 'in_flight'`)[0]
        ?.n ?? 0;
    return {
      server,
      chain,
      agentChain,
      payers,
      balances: () =>
        Promise.all(
          payers.map((p) =>
            reader.readContract({
              address: asset,
              abi: erc20Abi,
              functionName: "balanceOf",
              args: [p.address],
            }),
          ),
        ),
      async authorizationsUsed(payments) {
        const used = new Map<string, boolean>();
        for (const p of payments) {
          const args = [p.payer, p.nonce] as const;
          used.set(
            paymentKey(p),
            await reader.readContract({
              address: asset,
              abi: usdc,
              functionName: "authorizationState",
              args,
            }),
          );
        }
        return used;
      },
      async paymentRows() {
        const rows = await sql<
          PaymentRow[]
        >`select payer, nonce, state, transaction, route from x402_payments`;
        return new Map(rows.map((r) => [`${r.payer}:${r.nonce}`, r]));
      },
      async claimsClosed(timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        while ((await openClaims()) > 0 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
      async onboardingSessions() {
        const [row] = await sql<{ n: number }[]>`select count(*)::int as n from onboarding_sessions`;
        return row?.n ?? 0;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The network, token and EIP-712 domain a paid route's 402 challenge names (from the catalog). */
async function challengeAsset(baseUrl: string): Promise<AgentChain> {
  const res = await fetch(`${baseUrl}/x402`);
  const catalog = (await res.json()) as {
    items?: {
      accepts?: { network?: string; asset?: string; extra?: { name?: string; version?: string } }[];
    }[];
  };
  const accepts = catalog.items?.[0]?.accepts?.[0];
  const network = `eip155:${DEV_CHAIN_ID}` as const;
  const asset = accepts?.asset;
  if (accepts?.network !== network || !asset || !isAddress(asset))
    throw new Error(`the catalog names no dev-chain asset: ${JSON.stringify(accepts)}`);
  const domain = { name: accepts.extra?.name ?? "USD Coin", version: accepts.extra?.version ?? "2" };
  return { network, asset: { address: asset, ...domain } };
}

/** The demo payer (account #1, funded on every start of the chain) gives each payer PAYER_FUNDS. */
async function fund(rpcUrl: string, asset: Address, payers: DevAccount[]): Promise<void> {
  const transport = http(rpcUrl);
  const reader = createPublicClient({ transport });
  const wallet = createWalletClient({ account: privateKeyToAccount(devAccount(1).privateKey), transport });
  for (const payer of payers) {
    const hash = await wallet.writeContract({
      chain: null,
      address: asset,
      abi: erc20Abi,
      functionName: "transfer",
      args: [payer.address, PAYER_FUNDS],
    });
    await reader.waitForTransactionReceipt({ hash });
  }
}
