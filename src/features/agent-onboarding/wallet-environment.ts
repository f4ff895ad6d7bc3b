import { and, eq } from "drizzle-orm";
import type { Wallet } from "../../actor.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { findWalletOrganization, signupRequired } from "./callers.ts";
import { firstEnvironmentId } from "./next-actions.ts";

export type WalletScope = { organizationId: string; environmentId: string };

/**
 * Tenancy of a paid call: the verified payer's organisation and one of its environments (the one
 * asked for, or its first). Another organisation's environment reads as `not_found`; a wallet
 * without an organisation is `signup_required` — both refusals, so the payment is not taken.
 */
export async function walletScope(
  deps: Deps,
  wallet: Wallet,
  environmentId: string | undefined,
): Promise<WalletScope> {
  const org = await findWalletOrganization(deps.db, wallet);
  if (!org) throw signupRequired(deps);
  const id = environmentId ?? (await firstEnvironmentId(deps.db, org.id));
  const [environment] = id
    ? await deps.db
        .select({ id: environments.id })
        .from(environments)
        .where(and(eq(environments.id, id), eq(environments.organizationId, org.id)))
    : [];
  if (!environment) throw new AppError("not_found", "Your organisation has no such environment.");
  return { organizationId: org.id, environmentId: environment.id };
}
