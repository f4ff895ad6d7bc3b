import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";

/**
 * Why no run can start on this server now (no model, no sandbox), or undefined when one can. The
 * one check behind both a start's refusal and what the x402 catalog, /llms.txt and next_actions
 * say about the routes that start runs, so they cannot disagree. Read per call: a test (or a
 * future reload) may give the deps a model after start-up.
 */
export function startRefusal(deps: Pick<Deps, "languageModel" | "remediation">): AppError | undefined {
  if (!deps.languageModel) {
    return new AppError(
      "model_not_configured",
      "No model is configured for the remediation agent; set PATCHBAY_MODEL (and the provider's key) and restart.",
    );
  }
  if (deps.remediation.sandbox.kind === "unavailable") {
    return new AppError(
      "sandbox_unavailable",
      "No sandbox is available on this service to run repository code (see PATCHBAY_SANDBOX in docs/remediation.md).",
    );
  }
  return undefined;
}
