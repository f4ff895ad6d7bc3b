import type Provider from "oidc-provider";
import { type ServiceContext, withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { oauthGrants } from "../../platform/db/schema/oauth.ts";
import type { WebUser } from "../web-sessions/index.ts";
import { resolveWebActor } from "../web-sessions/index.ts";

export type AuthorizationRequest = {
  clientId: string;
  /** Scopes outside any resource (`openid`, `offline_access`). */
  oidcScopes: readonly string[];
  /** Scopes per resource indicator, as the consent prompt lists them. */
  resourceScopes: Readonly<Record<string, readonly string[]>>;
};

/**
 * The signed-in person grants a client what it asked for in one of their organisations: the
 * provider's grant is bound to it here (each request then checks the membership). Not a member: 404.
 */
export async function approveAuthorization(args: {
  deps: Deps;
  provider: Pick<Provider, "Grant">;
  requestId: string;
  input: { user: WebUser; organizationId: string; request: AuthorizationRequest };
}): Promise<{ grantId: string; id: string }> {
  const { deps, input } = args;
  const resolved = await resolveWebActor(deps.db, input.user, input.organizationId);
  if (!resolved) throw new AppError("not_found", "There is no such organisation among yours.");
  // Consent is given on the web pages, whichever client asked for it.
  const ctx: ServiceContext = { deps, actor: resolved.actor, channel: "web", requestId: args.requestId };

  const grant = new args.provider.Grant({ accountId: input.user.userId, clientId: input.request.clientId });
  if (input.request.oidcScopes.length > 0) grant.addOIDCScope(input.request.oidcScopes.join(" "));
  const scopes = new Set(input.request.oidcScopes);
  for (const [resource, resourceScopes] of Object.entries(input.request.resourceScopes)) {
    if (resourceScopes.length === 0) continue;
    grant.addResourceScope(resource, resourceScopes.join(" "));
    for (const scope of resourceScopes) scopes.add(scope);
  }
  const grantId = await grant.save();
  const id = newId("oag");
  try {
    await withTransaction(ctx, async (tx) => {
      await tx.insert(oauthGrants).values({
        id,
        grantId,
        organizationId: input.organizationId,
        userId: input.user.userId,
        clientId: input.request.clientId,
        scope: [...scopes].join(" "),
        createdAt: deps.clock(),
      });
      await recordAudit(tx, ctx, {
        action: "oauth.grant.created",
        targetType: "oauth_grant",
        targetId: id,
        details: {
          clientId: input.request.clientId,
          resources: Object.keys(input.request.resourceScopes),
          scopes: [...scopes],
        },
      });
    });
  } catch (error) {
    // Without its binding the grant could never be used; do not leave it behind.
    await grant.destroy().catch(() => {});
    throw error;
  }
  return { grantId, id };
}
