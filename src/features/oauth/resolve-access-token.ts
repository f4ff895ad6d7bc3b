import { and, eq } from "drizzle-orm";
import type { MemberActor } from "../../actor.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import {
  permissionsForScopes,
  type ResourceName,
  resourceNamed,
  resourceUrl,
} from "../../oauth-resources.ts";
import { oauthGrants } from "../../platform/db/schema/oauth.ts";
import { memberships } from "../../platform/db/schema/users.ts";
import { createOAuthAdapter } from "./adapter.ts";

/** oidc-provider's opaque tokens are 43 base64url characters; allow some room, refuse junk early. */
const tokenShape = /^[A-Za-z0-9_-]{20,256}$/;

/**
 * An opaque OAuth access token → the actor it acts as, or null (unknown, expired, revoked, or no
 * longer a member). Read on every request, so revocations take effect at once everywhere. A token
 * for the other resource is refused saying so (RFC 8707): `/mcp` never opens `/api/v1`, nor back.
 */
export async function resolveAccessToken(
  deps: Pick<Deps, "db" | "config">,
  token: string,
  resource: ResourceName,
): Promise<MemberActor | null> {
  if (!tokenShape.test(token)) return null;
  const stored = await createOAuthAdapter(deps.db, "AccessToken").find(token);
  if (stored?.kind !== "AccessToken") return null;
  if (typeof stored.exp !== "number" || stored.exp * 1000 <= Date.now()) return null;
  const audience = typeof stored.aud === "string" ? stored.aud : undefined;
  const expected = resourceUrl(deps.config.baseUrl, resource);
  if (audience !== expected) {
    const other = audience ? resourceNamed(deps.config.baseUrl, audience) : undefined;
    throw new AppError(
      "unauthorized",
      other
        ? `This access token was issued for ${audience}, not ${expected}; get a token for ${expected}.`
        : `This access token was not issued for ${expected}.`,
      { audience: expected },
    );
  }
  if (typeof stored.grantId !== "string" || typeof stored.accountId !== "string") return null;
  const [binding] = await deps.db
    .select({ id: oauthGrants.id, organizationId: oauthGrants.organizationId, role: memberships.role })
    .from(oauthGrants)
    .innerJoin(
      memberships,
      and(
        eq(memberships.organizationId, oauthGrants.organizationId),
        eq(memberships.userId, oauthGrants.userId),
      ),
    )
    .where(and(eq(oauthGrants.grantId, stored.grantId), eq(oauthGrants.userId, stored.accountId)))
    .limit(1);
  if (!binding) return null;
  const scopes = typeof stored.scope === "string" ? stored.scope.split(" ").filter(Boolean) : [];
  return Object.freeze({
    type: "oauth_token",
    id: binding.id,
    userId: stored.accountId,
    organizationId: binding.organizationId,
    role: binding.role,
    permissions: permissionsForScopes(resource, scopes),
    oauth: { resource, scopes, clientId: typeof stored.clientId === "string" ? stored.clientId : "" },
  });
}
