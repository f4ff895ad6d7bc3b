import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { oauthGrants, oauthModels } from "../../platform/db/schema/oauth.ts";

/**
 * Ends every OAuth grant a person holds in an organisation: the grant, its codes and tokens
 * (oidc-provider's rows) and the binding. Called in the transaction that removes the member —
 * tokens already stop working then (the membership is read on every request), but without this
 * a later re-invitation would bring them back, as with API keys. Returns how many grants ended.
 */
export async function revokeMemberGrants(
  tx: Db,
  member: { organizationId: string; userId: string },
): Promise<number> {
  const ended = await tx
    .delete(oauthGrants)
    .where(and(eq(oauthGrants.organizationId, member.organizationId), eq(oauthGrants.userId, member.userId)))
    .returning({ grantId: oauthGrants.grantId });
  if (ended.length > 0) {
    await tx.delete(oauthModels).where(
      inArray(
        oauthModels.grantId,
        ended.map((g) => g.grantId),
      ),
    );
  }
  return ended.length;
}
