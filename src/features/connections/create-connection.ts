import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { auditRows } from "../../platform/audit/record-audit.ts";
import { isUniqueViolation } from "../../platform/db/errors.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { validateEndpointUrl } from "../../platform/egress/endpoint-url.ts";
import { findEnvironment } from "../environments/index.ts";
import { assertHeaderName } from "./remote-auth.ts";
import type { AuthInputValue, Connection } from "./schemas.ts";
import { toConnection } from "./view-connection.ts";

/** Spec part 3: a new connection is disabled, has no credential, and starts at revision 1. */
export async function createConnection(args: {
  ctx: ServiceContext;
  input: {
    environmentId: string;
    alias: string;
    displayName: string;
    endpointUrl: string;
    auth: AuthInputValue;
  };
}): Promise<Connection> {
  requireOwnerOrAdmin(args.ctx, "mcp_connections:manage");
  const { input, ctx } = args;
  const endpoint = validateEndpointUrl(input.endpointUrl, ctx.deps.config.egress);
  if (input.auth.kind === "api_key") assertHeaderName(input.auth.headerName);
  const now = ctx.deps.clock();
  return withTransaction(ctx, async (tx) => {
    // Its id as stored (the path may spell it in upper case): the audit row's environment is text.
    const environmentId = (await findEnvironment(tx, ctx, input.environmentId)).id;
    const id = newId("mcp");
    // Everything the audit row says is known before the insert, so it goes in the same statement
    // (a `with`): a refused insert (alias taken) fails the statement, audit row included.
    const audit = auditRows(tx, ctx, [
      {
        action: "mcp_connection.created",
        targetType: "mcp_connection",
        targetId: id,
        environmentId,
        details: {
          environmentId,
          alias: input.alias,
          endpointOrigin: endpoint.origin,
          authKind: input.auth.kind,
        },
      },
    ]);
    const [row] = await tx
      .with(tx.$with("audit_rows", {}).as(audit.getSQL()))
      .insert(mcpConnections)
      .values({
        id,
        organizationId: ctx.actor.organizationId,
        environmentId: input.environmentId,
        alias: input.alias,
        displayName: input.displayName,
        endpointUrl: endpoint.canonical,
        endpointOrigin: endpoint.origin,
        authKind: input.auth.kind,
        authHeaderName: input.auth.kind === "api_key" ? input.auth.headerName : null,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .catch((error: unknown) => {
        if (isUniqueViolation(error)) {
          throw new AppError(
            "alias_taken",
            `A connection with alias "${input.alias}" already exists in this environment.`,
          );
        }
        throw error;
      });
    if (!row) throw new Error("insert returned no row");
    return toConnection(row, null);
  });
}
