import type { ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { callerEnvironment } from "../environments/index.ts";
import {
  authorizeStart,
  chooseProblem,
  type StartedRemediation,
  startRemediation,
} from "../remediations/index.ts";
import { hasTelemetry } from "../telemetry/index.ts";
import { healthAction, problemsAction, sendTelemetryAction } from "./next-actions.ts";

/**
 * The guided flow's shortcut (`POST /x402/resolve`, spec 4D): starts the run of `startRemediation`
 * for the named problem or the one `chooseProblem` picks. Refusals are 409s, so never charged.
 */
export async function resolveProblem(args: {
  ctx: ServiceContext;
  input: { environmentId?: string | undefined; problemId?: string | undefined };
}): Promise<StartedRemediation> {
  const { ctx, input } = args;
  authorizeStart(ctx);
  const { deps } = ctx;
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  if (!input.problemId && !(await hasTelemetry(deps.db, environmentId))) {
    throw new AppError(
      "telemetry_required",
      "No telemetry has arrived in this environment yet, so there is nothing to resolve; nothing was charged. Send traces and logs first.",
      { next_actions: [sendTelemetryAction(deps)] },
    );
  }
  const problemId = input.problemId ?? (await chooseProblem(deps.db, environmentId))?.id;
  if (!problemId) {
    throw new AppError(
      "nothing_to_resolve",
      "No open or regressed problem without a run in this environment; nothing was charged.",
      {
        next_actions: [
          problemsAction(deps, environmentId, "The environment's problems and their remediation state."),
          healthAction(deps, environmentId),
        ],
      },
    );
  }
  return startRemediation({ ctx, input: { ...input, problemId } });
}
