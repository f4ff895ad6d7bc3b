import type { Deps } from "../../deps.ts";
import type { NextAction } from "./next-action.ts";
import { onboardingDigest, organizationActions } from "./next-actions.ts";
import { firstEnvironmentId } from "./sign-up-wallet.ts";

/** How the x402 router checks an assumption of a subject kind before any payment. */
export type AssumptionKind = {
  /** The subject's current digest; undefined when the subject is gone. */
  digest(deps: Deps, id: string): Promise<string | undefined>;
  /** Fresh suggestions for the subject, sent with `stale_assumed_state`. */
  nextActions(deps: Deps, id: string): Promise<NextAction[]>;
};

/** `onboarding:<organisation id>`: "start onboarding" assumed the organisation's open sessions. */
export const onboardingAssumption: AssumptionKind = {
  digest: (deps, organizationId) => onboardingDigest(deps, organizationId),
  async nextActions(deps, organizationId) {
    const environmentId = await firstEnvironmentId(deps.db, organizationId);
    return environmentId ? organizationActions(deps, { id: organizationId, environmentId }) : [];
  },
};
