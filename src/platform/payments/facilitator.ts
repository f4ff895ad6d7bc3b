import { AsyncLocalStorage } from "node:async_hooks";
import {
  InMemoryPendingSettlementStore,
  type PendingSettlementStore,
  x402Facilitator,
} from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import {
  type Abi,
  BaseError,
  createNonceManager,
  createWalletClient,
  defineChain,
  getAddress,
  type Hex,
  HttpRequestError,
  http,
  isAddress,
  isAddressEqual,
  isHex,
  type PublicActions,
  parseAbiItem,
  parseEventLogs,
  publicActions,
  TimeoutError,
  TransactionNotFoundError,
  type Transport,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { jsonRpc } from "viem/nonce";

/**
 * Bounds on one RPC request and its one retry: a frozen or unreachable node must not hold a paid
 * call open (a local chain answers in milliseconds). Worst case, about 8 s per step that waits.
 */
const RPC_TIMEOUT_MS = 4_000;
const RPC_RETRIES = 1;
/** How often a settlement's receipt is looked for: a local chain mines at once. */
const POLLING_MS = 250;
/** Bound on waiting for a settlement receipt: a local chain mines at once; a stuck one fails. */
const CONFIRMATION_TIMEOUT_MS = 5_000;

/**
 * The embedded default's facilitator: the SDK's own `x402Facilitator` with the `exact` EVM
 * scheme, settling from `privateKey` over `rpcUrl`, in this process (no HTTP hop).
 *
 * Settlements are transactions from one account, so concurrent ones need distinct account
 * nonces: a viem nonce manager hands them out locally instead of each asking the node for the
 * same pending count (which would make all but one of them collide). Its own instance, not
 * viem's global one, so a restarted chain never inherits counts from the last.
 *
 * The node going away is an outage, never a verdict on the payment: the SDK turns RPC errors into
 * reason codes (`invalid_exact_evm_transaction_simulation_failed`, `…_transaction_failed`), so an
 * operation in which an RPC request goes unanswered throws at once (`watched`), which the
 * boundary answers as 503. And a settlement that already happened is found again
 * (`earlierSettlement`).
 */
export function createLocalFacilitator(args: {
  rpcUrl: string;
  chainId: number;
  network: Network;
  privateKey: Hex;
}): FacilitatorClient {
  const nonceManager = createNonceManager({ source: jsonRpc() });
  const account = privateKeyToAccount(args.privateKey, { nonceManager });
  // A settlement that did not go through may leave the nonce it took unused (never sent, or
  // dropped by the node): counted on from there, every later transaction would wait behind the
  // gap. So the next one asks the node again.
  // This facilitator's operations, each told when one of its RPC requests goes unanswered.
  const operation: Operations = new AsyncLocalStorage();
  const recount = () => nonceManager.reset({ address: account.address, chainId: args.chainId });
  const chain = defineChain({
    id: args.chainId,
    name: `chain ${args.chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [args.rpcUrl] } },
  });
  const client = createWalletClient({
    account,
    chain,
    transport: watchedHttp(args.rpcUrl, operation),
    pollingInterval: POLLING_MS,
  }).extend(publicActions);
  // The SDK's signer interface types ABIs and typed data loosely (`readonly unknown[]`,
  // `Record<string, unknown>`); viem wants its precise types. The values are the SDK's own
  // constants, so narrowing them here is a statement of fact, not a guess.
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      // The SDK starts its asset check (eth_getCode) in the background and may return before
      // awaiting it; its failure would then reject with nobody listening. An unanswered request
      // has already ended the operation (`watched`), so the value returned here is never used.
      getCode: (a) =>
        client.getCode(a).catch((error: unknown) => {
          if (operation.getStore() && isUnanswered(error)) return undefined;
          throw error;
        }),
      readContract: (a) =>
        client.readContract({
          address: a.address,
          abi: a.abi as Abi,
          functionName: a.functionName,
          args: a.args ?? [],
        }),
      verifyTypedData: (a) => client.verifyTypedData(a as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: (a) =>
        client.writeContract({
          address: a.address,
          abi: a.abi as Abi,
          functionName: a.functionName,
          args: a.args,
          ...(a.gas === undefined ? {} : { gas: a.gas }),
          ...(a.dataSuffix === undefined ? {} : { dataSuffix: a.dataSuffix }),
        }),
      sendTransaction: (a) => client.sendTransaction({ to: a.to, data: a.data }),
      waitForTransactionReceipt: (a) => client.waitForTransactionReceipt(a),
    },
    { confirmationTimeoutMs: CONFIRMATION_TIMEOUT_MS },
  );
  const facilitator = new x402Facilitator().register(
    args.network,
    new ExactEvmScheme(signer, { pendingSettlementStore: forgettingDropped(client) }),
  );
  return {
    verify: (payload: PaymentPayload, requirements: PaymentRequirements) =>
      watched(operation, () => facilitator.verify(payload, requirements)),
    settle: async (payload: PaymentPayload, requirements: PaymentRequirements) => {
      try {
        const result = await watched(operation, async () => {
          const settled = await facilitator.settle(payload, requirements);
          if (settled.success) return settled;
          const earlier = await earlierSettlement(client, payload, requirements);
          return earlier
            ? { success: true, transaction: earlier, network: requirements.network, payer: settled.payer }
            : settled;
        });
        if (!result.success) recount();
        return result;
      } catch (error) {
        recount();
        throw error;
      }
    },
    getSupported: async () => {
      const supported = facilitator.getSupported();
      return { ...supported, kinds: supported.kinds.map((k) => ({ ...k, network: k.network as Network })) };
    },
  };
}

/** The facilitator operation an RPC request belongs to: told when a request goes unanswered. */
type Operations = AsyncLocalStorage<{ unanswered(error: unknown): void }>;

/** viem's HTTP transport, bounded, reporting each request that got no answer to its operation. */
function watchedHttp(url: string, operation: Operations): Transport {
  const inner = http(url, { timeout: RPC_TIMEOUT_MS, retryCount: RPC_RETRIES });
  return (params) => {
    const transport = inner(params);
    const request: typeof transport.request = async (args, options) => {
      try {
        return await transport.request(args, options);
      } catch (error) {
        if (isUnanswered(error)) operation.getStore()?.unanswered(error);
        throw error;
      }
    };
    return { ...transport, request };
  };
}

/** No answer from the node: a timeout, a refused or reset connection, an HTTP error status. */
const isUnanswered = (error: unknown): boolean =>
  error instanceof BaseError &&
  error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null;

/**
 * Runs a facilitator operation, ending it with the error of the first RPC request that went
 * unanswered (after its retry). The SDK would carry on — a verification makes several requests
 * one after another, each waiting out its timeout against a frozen node — and then report a
 * refusal. Whatever it still does is abandoned: a verification moves nothing, and a settlement
 * that goes through after all is found by `earlierSettlement` when the payment is sent again.
 */
function watched<T>(operation: Operations, run: () => Promise<T>): Promise<T> {
  let unanswered: (error: unknown) => void = () => {};
  const gaveUp = new Promise<never>((_, reject) => {
    unanswered = reject;
  });
  return Promise.race([operation.run({ unanswered }, run), gaveUp]);
}

/**
 * The SDK's memory of settlements it sent but could not confirm: the next settle of the payment
 * only waits for that transaction again. One the node no longer knows (dropped, or lost with a
 * node that restarted without its pool) would be waited for on every retry, for ever; it is
 * forgotten instead, so the payment is verified and sent again — its EIP-3009 nonce makes a
 * second transfer impossible.
 */
function forgettingDropped(client: PublicActions): PendingSettlementStore {
  const sent = new InMemoryPendingSettlementStore();
  return {
    async get(key) {
      const hash = await sent.get(key);
      if (hash === undefined || !isHex(hash)) return hash;
      try {
        await client.getTransaction({ hash });
        return hash;
      } catch (error) {
        if (!(error instanceof TransactionNotFoundError)) throw error;
        await sent.delete(key);
        return undefined;
      }
    },
    set: (key, hash) => sent.set(key, hash),
    delete: (key) => sent.delete(key),
  };
}

const authorizationUsed = parseAbiItem(
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
);
const transferred = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

/**
 * The transaction that already settled this payment, if one did. A settlement whose answer was
 * lost — the node took the transaction and then did not answer, or the process restarted, or the
 * retry reached another instance — leaves the authorization used on chain, and settling it again
 * fails (`invalid_exact_evm_nonce_already_used`): the payer would be charged and never receive
 * the answer held for them. The token's `AuthorizationUsed` event names the transaction; its
 * `Transfer` must be the payment itself (payer → payTo, the price), as the SDK checks on success.
 */
async function earlierSettlement(
  client: PublicActions,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<Hex | undefined> {
  const { authorization } = payload.payload as { authorization?: { from?: unknown; nonce?: unknown } };
  const from = authorization?.from;
  const nonce = authorization?.nonce;
  if (typeof from !== "string" || !isAddress(from) || !isHex(nonce)) return undefined;
  const asset = getAddress(requirements.asset);
  const uses = await client.getLogs({
    address: asset,
    event: authorizationUsed,
    args: { authorizer: from, nonce },
    fromBlock: "earliest",
  });
  for (const use of uses) {
    if (!use.transactionHash) continue;
    const receipt = await client.getTransactionReceipt({ hash: use.transactionHash });
    if (receipt.status !== "success") continue;
    const transfers = parseEventLogs({
      abi: [transferred],
      logs: receipt.logs.filter((log) => isAddressEqual(log.address, asset)),
    });
    const paid = transfers.some(
      (t) =>
        isAddressEqual(t.args.from, from) &&
        isAddressEqual(t.args.to, getAddress(requirements.payTo)) &&
        t.args.value === BigInt(requirements.amount),
    );
    if (paid) return use.transactionHash;
  }
  return undefined;
}
