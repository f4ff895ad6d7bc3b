import type { AssumptionKind } from "./assumed-state.ts";
import { onboardingDigest, organizationActions } from "./next-actions.ts";
import { firstEnvironmentId } from "./sign-up-wallet.ts";

/** `onboarding:<organisation id>`: "start onboarding" assumed the organisation's open sessions. */
export const onboardingAssumption: AssumptionKind = {
  digest: (deps, organizationId) => onboardingDigest(deps, organizationId),
  async nextActions(deps, organizationId) {
    const environmentId = await firstEnvironmentId(deps.db, organizationId);
    return environmentId ? organizationActions(deps, { id: organizationId, environmentId }) : [];
  },
};
