import { and, eq } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import type { Db } from "../../platform/db/client.ts";
import { memberships } from "../../platform/db/schema/users.ts";
import { signToken } from "../../platform/vault/signed-token.ts";

/**
 * The link a human operator opens to take over a wallet organisation: signed, naming the session,
 * so every poll can show it without storing a secret. It works once and dies with the session.
 */
export function approvalUrl(deps: Pick<Deps, "keyring" | "config">, sessionId: string): string {
  const token = signToken(deps.keyring, "onboarding/approval-link", { s: sessionId });
  // In the query: the access log records paths, never query strings.
  return `${deps.config.baseUrl}/approve?token=${encodeURIComponent(token)}`;
}

/** Whether a human owns the organisation (a wallet organisation has none until claimed). */
export const isClaimed = async (db: Db, organizationId: string) =>
  (await db.$count(
    memberships,
    and(eq(memberships.organizationId, organizationId), eq(memberships.role, "owner")),
  )) > 0;
