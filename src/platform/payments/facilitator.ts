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
import { evmChain } from "./dev-chain-deploy.ts";

/** A frozen or unreachable node must not hold a paid call open; a local chain mines at once. */
const RPC_TIMEOUT_MS = 4_000;
const RPC_RETRIES = 1;
const POLLING_MS = 250;
const CONFIRMATION_TIMEOUT_MS = 5_000;

type LocalFacilitatorArgs = { rpcUrl: string; chainId: number; network: Network; privateKey: Hex };

/**
 * The embedded default's facilitator: the SDK's `x402Facilitator` with the `exact` EVM scheme,
 * settling from `privateKey` over `rpcUrl`, in this process.
 *
 * Concurrent settlements from one account need distinct nonces: a nonce manager of its own (not
 * viem's global one, which a restarted chain would inherit) hands them out locally.
 *
 * The node going away is an outage, never a verdict on the payment (the SDK would turn RPC errors
 * into reason codes): an operation with an unanswered RPC request throws at once (`watched`), and
 * a settlement that already happened is found again (`earlierSettlement`).
 *
 * Built when payments first need it (`startPayments` loads this module then): deriving the
 * account's key is secp256k1 work in JavaScript (~50 ms), for a facilitator many starts never use.
 */
export function createLocalFacilitator(args: LocalFacilitatorArgs): FacilitatorClient {
  const nonceManager = createNonceManager({ source: jsonRpc() });
  const account = privateKeyToAccount(args.privateKey, { nonceManager });
  const operation: Operations = new AsyncLocalStorage();
  // A failed settlement may leave its nonce unused, and later ones would wait behind the gap.
  const recount = () => nonceManager.reset({ address: account.address, chainId: args.chainId });
  const client = createWalletClient({
    account,
    chain: evmChain(args.chainId, `chain ${args.chainId}`, args.rpcUrl),
    transport: watchedHttp(args.rpcUrl, operation),
    pollingInterval: POLLING_MS,
  }).extend(publicActions);
  // The SDK types ABIs and typed data loosely; they are its own constants, so the casts are exact.
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      // The SDK may not await this check; an unanswered request has already ended the operation.
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
export const isUnanswered = (error: unknown): boolean =>
  error instanceof BaseError &&
  error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null;

/**
 * Runs a facilitator operation, ending it with the first RPC request that went unanswered: the
 * SDK would wait out each request's timeout and then report a refusal. What it still does is
 * abandoned; a settlement that goes through after all is found by `earlierSettlement`.
 */
function watched<T>(operation: Operations, run: () => Promise<T>): Promise<T> {
  let unanswered: (error: unknown) => void = () => {};
  const gaveUp = new Promise<never>((_, reject) => {
    unanswered = reject;
  });
  return Promise.race([operation.run({ unanswered }, run), gaveUp]);
}

/**
 * The SDK's memory of settlements sent but not confirmed. One the node no longer knows would be
 * waited for on every retry, for ever; it is forgotten instead, so the payment is sent again (its
 * EIP-3009 nonce makes a second transfer impossible).
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
 * The transaction that already settled this payment, if one did: after a lost answer, settling
 * again fails (`…_nonce_already_used`) and the payer would be charged without receiving the held
 * answer. `AuthorizationUsed` names the transaction; its `Transfer` must be the payment itself.
 */
async function earlierSettlement(
  client: PublicActions,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<Hex | undefined> {
  const { from, nonce } =
    (payload.payload as { authorization?: { from?: unknown; nonce?: unknown } }).authorization ?? {};
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
