import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import {
  type Abi,
  createNonceManager,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  publicActions,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { jsonRpc } from "viem/nonce";

/** Bound on waiting for a settlement receipt: a local chain mines at once; a stuck one fails. */
const CONFIRMATION_TIMEOUT_MS = 30_000;

/**
 * The embedded default's facilitator: the SDK's own `x402Facilitator` with the `exact` EVM
 * scheme, settling from `privateKey` over `rpcUrl`, in this process (no HTTP hop).
 *
 * Settlements are transactions from one account, so concurrent ones need distinct account
 * nonces: a viem nonce manager hands them out locally instead of each asking the node for the
 * same pending count (which would make all but one of them collide). Its own instance, not
 * viem's global one, so a restarted chain never inherits counts from the last.
 */
export function createLocalFacilitator(args: {
  rpcUrl: string;
  chainId: number;
  network: Network;
  privateKey: Hex;
}): FacilitatorClient {
  const account = privateKeyToAccount(args.privateKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const chain = defineChain({
    id: args.chainId,
    name: `chain ${args.chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [args.rpcUrl] } },
  });
  const client = createWalletClient({ account, chain, transport: http(args.rpcUrl) }).extend(publicActions);
  // The SDK's signer interface types ABIs and typed data loosely (`readonly unknown[]`,
  // `Record<string, unknown>`); viem wants its precise types. The values are the SDK's own
  // constants, so narrowing them here is a statement of fact, not a guess.
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      getCode: (a) => client.getCode(a),
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
  const facilitator = new x402Facilitator().register(args.network, new ExactEvmScheme(signer));
  return {
    verify: (payload: PaymentPayload, requirements: PaymentRequirements) =>
      facilitator.verify(payload, requirements),
    settle: (payload: PaymentPayload, requirements: PaymentRequirements) =>
      facilitator.settle(payload, requirements),
    getSupported: async () => {
      const supported = facilitator.getSupported();
      return { ...supported, kinds: supported.kinds.map((k) => ({ ...k, network: k.network as Network })) };
    },
  };
}
