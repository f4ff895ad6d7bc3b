import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AppError, ErrorCode } from "../../errors.ts";

/** A feature's advice for its own codes, naming its tools (e.g. "call get_mcp_connection …"). */
export type NextStep = (error: AppError) => string | undefined;

/** `_meta` key of an error result: the machine-readable twin of its text. */
export const ERROR_META_KEY = "patchbay/error";

/** Advice for codes any tool can meet; a feature's `NextStep` wins over these. */
const genericSteps: Partial<Record<ErrorCode, string>> = {
  forbidden:
    "Use an API key of an owner or administrator of the organisation that carries the permission named above.",
  insufficient_scope: "Sign in again and grant the scope named above.",
  invalid_request: "Fix the arguments and call the tool again.",
  idempotency_key_reused:
    "Use a new idempotencyKey for a different request, or omit it to have one generated.",
  idempotency_in_flight: "Retry shortly with the same idempotencyKey; the first call is still running.",
  rate_limited: "Wait a little, then retry.",
  service_unavailable: "Retry later.",
  database_unavailable: "Retry in a few seconds with the same arguments (and idempotencyKey, for a change).",
};

/**
 * An `AppError` as a tool result. Every AppError is something the caller can act on, so it is
 * an `isError` result (the model sees it) rather than a JSON-RPC error. No `structuredContent`:
 * clients validate it against the tool's `outputSchema`, which describes success.
 */
export function appErrorResult(error: AppError, requestId: string, nextStep?: NextStep): CallToolResult {
  const step = nextStep?.(error) ?? genericSteps[error.code];
  const text = `${error.code}: ${error.message}${step ? ` Next step: ${step}` : ""}`;
  return {
    isError: true,
    content: [{ type: "text", text }],
    _meta: {
      [ERROR_META_KEY]: {
        ...error.details,
        code: error.code,
        message: error.message,
        ...(step ? { nextStep: step } : {}),
        requestId,
      },
    },
  };
}

/** Anything else is our fault: the caller learns the request id only, never the message. */
export function internalErrorResult(requestId: string): CallToolResult {
  const message = `An internal error occurred; quote the request id ${requestId} to support.`;
  return {
    isError: true,
    content: [{ type: "text", text: `internal: ${message}` }],
    _meta: { [ERROR_META_KEY]: { code: "internal", message, requestId } },
  };
}
