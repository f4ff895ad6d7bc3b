import type { FacilitatorClient } from "@x402/core/server";
import {
  FacilitatorResponseError,
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
  VerifyError,
  type VerifyResponse,
} from "@x402/core/types";
import type { Logger } from "../logging/logger.ts";

/**
 * Wraps a facilitator so nothing it says reaches a client but reason codes (the SDK copies its
 * messages, which can hold RPC errors and URLs, into headers). Messages are logged and dropped;
 * an outage becomes a bare `FacilitatorResponseError` (503 `payments_unavailable`).
 */
export function guardFacilitator(inner: FacilitatorClient, logger: Logger): FacilitatorClient {
  const refused = (reason: unknown, detail: unknown) =>
    logger.info({ reason, detail }, "x402 payment refused");
  const failed = (reason: unknown, detail: unknown) =>
    logger.warn({ reason, detail }, "x402 settlement failed");
  return {
    async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
      try {
        const { invalidMessage, ...result } = await inner.verify(payload, requirements);
        if (!result.isValid) refused(result.invalidReason, invalidMessage);
        return result;
      } catch (error) {
        if (error instanceof VerifyError) {
          refused(error.invalidReason, error.invalidMessage);
          return {
            isValid: false,
            invalidReason: error.invalidReason ?? "invalid_payment",
            payer: error.payer,
          };
        }
        throw outage(logger, "verify", error);
      }
    },
    async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
      try {
        const { errorMessage, ...result } = await inner.settle(payload, requirements);
        if (!result.success) failed(result.errorReason, errorMessage);
        return result;
      } catch (error) {
        if (error instanceof SettleError) {
          failed(error.errorReason, error.errorMessage);
          return {
            success: false,
            errorReason: error.errorReason ?? "settlement_failed",
            payer: error.payer,
            transaction: error.transaction,
            network: error.network,
          };
        }
        throw outage(logger, "settle", error);
      }
    },
    async getSupported() {
      try {
        return await inner.getSupported();
      } catch (error) {
        throw outage(logger, "supported", error);
      }
    },
  };
}

function outage(logger: Logger, operation: string, error: unknown): FacilitatorResponseError {
  logger.error({ err: error, operation }, "x402 facilitator unavailable");
  return new FacilitatorResponseError("facilitator unavailable");
}
