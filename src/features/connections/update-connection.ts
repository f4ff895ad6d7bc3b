import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { auditRows } from "../../platform/audit/record-audit.ts";
import { validateEndpointUrl } from "../../platform/egress/endpoint-url.ts";
import { destroyCredential } from "../../platform/vault/credential-store.ts";
import { assertRevision, bumpRevision, type ConnectionRef, findConnection } from "./find-connection.ts";
import { assertHeaderName } from "./remote-auth.ts";
import type { AuthInputValue, Connection } from "./schemas.ts";
import { hasApproval, toListedConnection, viewConnection } from "./view-connection.ts";

/**
 * Partial update (alias is immutable). Changing the endpoint or the auth configuration needs a
 * disabled connection and makes the approval stale (spec part 3). The credential is destroyed
 * when the auth kind changes (it was for another scheme) or when the endpoint moves to another
 * origin — otherwise repointing a connection would send the stored secret to a new server,
 * which amounts to showing it again.
 */
export async function updateConnection(args: {
  ctx: ServiceContext;
  input: ConnectionRef & {
    revision: number;
    displayName?: string | undefined;
    endpointUrl?: string | undefined;
    auth?: AuthInputValue | undefined;
  };
}): Promise<Connection> {
  requireOwnerOrAdmin(args.ctx, "mcp_connections:manage");
  const { ctx, input } = args;
  const endpoint =
    input.endpointUrl === undefined
      ? undefined
      : validateEndpointUrl(input.endpointUrl, ctx.deps.config.egress);
  if (input.auth?.kind === "api_key") assertHeaderName(input.auth.headerName);

  return withTransaction(ctx, async (tx) => {
    const row = await findConnection(tx, ctx, input, { forUpdate: true });
    assertRevision(row, input.revision);

    const endpointChanged = endpoint !== undefined && endpoint.canonical !== row.endpointUrl;
    const originChanged = endpoint !== undefined && endpoint.origin !== row.endpointOrigin;
    const kindChanged = input.auth !== undefined && input.auth.kind !== row.authKind;
    const headerName =
      input.auth?.kind === "api_key" ? input.auth.headerName : input.auth ? null : row.authHeaderName;
    const headerChanged = input.auth !== undefined && headerName !== row.authHeaderName;
    const nameChanged = input.displayName !== undefined && input.displayName !== row.displayName;
    const configChanged = endpointChanged || kindChanged || headerChanged;

    if (!configChanged && !nameChanged) return viewConnection(tx, row);
    if (configChanged && row.enabled) {
      throw new AppError(
        "connection_enabled",
        "Disable the connection before changing its endpoint or authentication.",
      );
    }
    const credentialDestroyed = (kindChanged || originChanged) && row.credentialUpdatedAt !== null;
    if (credentialDestroyed) await destroyCredential(tx, { connectionId: row.id });

    const audit = auditRows(tx, ctx, [
      {
        action: "mcp_connection.updated",
        targetType: "mcp_connection",
        targetId: row.id,
        environmentId: row.environmentId,
        details: {
          revision: row.revision + 1,
          changed: [
            ...(nameChanged ? ["displayName"] : []),
            ...(endpointChanged ? ["endpointUrl"] : []),
            ...(kindChanged || headerChanged ? ["auth"] : []),
          ],
          endpointOrigin: endpoint?.origin ?? row.endpointOrigin,
          approvalStale: configChanged && hasApproval(row),
          credentialDestroyed,
        },
      },
    ]);
    const next = await bumpRevision(
      tx,
      row,
      {
        displayName: input.displayName ?? row.displayName,
        ...(endpoint ? { endpointUrl: endpoint.canonical, endpointOrigin: endpoint.origin } : {}),
        ...(input.auth ? { authKind: input.auth.kind, authHeaderName: headerName } : {}),
        // Another server or auth: what the old one rejected says nothing about the new one.
        ...(configChanged ? { configVersion: row.configVersion + 1, credentialRejectedAt: null } : {}),
        ...(credentialDestroyed ? { credentialUpdatedAt: null } : {}),
      },
      ctx.deps.clock(),
      audit,
    );
    return toListedConnection(next);
  });
}
