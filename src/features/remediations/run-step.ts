import { requirePermission, type ServiceContext } from "../../context.ts";
import { isAppError } from "../../errors.ts";
import { advance, type Claim, claimStep, failRun, LostClaim } from "./run-state.ts";
import { agentStep } from "./step-agent.ts";
import { openReviewStep } from "./step-open-review.ts";
import { startStep } from "./step-start.ts";
import { validateStep } from "./step-validate.ts";

/**
 * One job: one step of one run. The job names the step (`stepSeq`); a job for a step the run
 * has left is stale and does nothing, and claiming raises the run's lease so an earlier holder
 * of the same step (a worker pg-boss gave up on) can no longer write. Each step ends by moving
 * the run and enqueueing its successor in one transaction (`advance`).
 */
export async function runRemediationStep(args: {
  ctx: ServiceContext;
  input: { remediationId: string; stepSeq: number };
  signal: AbortSignal;
}): Promise<void> {
  const { ctx } = args;
  requirePermission(ctx, "remediations:manage");
  const deps = ctx.deps;
  const run = await claimStep(deps.db, args.input);
  if (!run) return;
  const claim: Claim = { id: run.id, stepSeq: run.stepSeq, lease: run.lease };
  const services = deps.remediation;
  try {
    if (run.cancelRequestedAt) {
      await advance(deps, claim, "cancelled", {}, { type: "cancelled", message: "Cancelled on request." });
      return;
    }
    const step = { deps, services, run, claim };
    switch (run.status) {
      case "queued":
        return await startStep(step);
      case "investigating":
      case "coding":
        return await agentStep({ ...step, ctx, signal: args.signal });
      case "validating":
        return await validateStep(step);
      case "opening-pr":
        return await openReviewStep(step);
      default:
        // Waiting and review states have no step: a job here is stale.
        return;
    }
  } catch (error) {
    if (error instanceof LostClaim) return;
    deps.logger.error({ err: error, remediationId: run.id, status: run.status }, "remediation step failed");
    const code = isAppError(error) ? error.code : "internal";
    const reason = isAppError(error)
      ? error.message
      : `The ${run.status} step failed unexpectedly; see the service log (remediation ${run.id}).`;
    await failRun(deps, claim, code, reason, { code }).catch((e: unknown) => {
      if (!(e instanceof LostClaim)) throw e;
    });
  }
}
