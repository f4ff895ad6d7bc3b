import { and, eq } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { auditRows } from "../../platform/audit/record-audit.ts";
import type { ToolDefinition } from "../../platform/db/schema/mcp-connections.ts";
import { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import { canonicalTool, hashManifest } from "../../platform/mcp-client/tool-hash.ts";
import { assertRevision, bumpRevision, type ConnectionRef, findConnection } from "./find-connection.ts";
import { assertEnvironmentRoom, MAX_APPROVED_TOOLS } from "./limits.ts";
import type { Connection } from "./schemas.ts";
import { toolAccess } from "./tool-access.ts";
import { toListedConnection } from "./view-connection.ts";

/**
 * Approves a subset of a discovery made under the current configuration. The approved manifest
 * is a frozen copy of those definitions; its hash is what tasks snapshot and what the gate
 * compares. Approval and enablement stay separate steps (spec part 3). Each approved tool gets an
 * access class (tool-access.ts): the ones named in `attestReadOnly` are `read` on the approver's
 * word, which the audit trail keeps with the manifest it was given for.
 */
export async function approveConnectionTools(args: {
  ctx: ServiceContext;
  input: ConnectionRef & {
    revision: number;
    discoveryId: string;
    toolNames: string[];
    attestReadOnly?: string[] | undefined;
  };
}): Promise<Connection> {
  const member = requireOwnerOrAdmin(args.ctx, "mcp_connections:manage");
  const { ctx, input } = args;
  const names = [...new Set(input.toolNames)];
  const attested = [...new Set(input.attestReadOnly ?? [])].sort();
  const unapproved = attested.filter((n) => !names.includes(n));
  if (unapproved.length) {
    throw new AppError(
      "invalid_request",
      `Only tools being approved can be attested as read-only; not in toolNames: ${unapproved.slice(0, 10).join(", ")}.`,
      { errors: [{ path: "attestReadOnly", message: "names tools that toolNames does not approve" }] },
    );
  }
  if (names.length > MAX_APPROVED_TOOLS) {
    throw new AppError(
      "limit_exceeded",
      `A connection may have at most ${MAX_APPROVED_TOOLS} approved tools; ${names.length} were selected.`,
      {
        limit: MAX_APPROVED_TOOLS,
        requested: names.length,
        resource: "approved_tools",
      },
    );
  }
  return withTransaction(ctx, async (tx) => {
    // Environment lock first (same order as enable): limit checks see a stable set.
    const row = await findConnection(tx, ctx, input, { forUpdate: true, lockEnvironment: true });
    assertRevision(row, input.revision);
    const [discovery] = await tx
      .select()
      .from(mcpDiscoveries)
      .where(and(eq(mcpDiscoveries.id, input.discoveryId), eq(mcpDiscoveries.connectionId, row.id)))
      .limit(1);
    if (!discovery)
      throw new AppError("not_found", `Discovery ${input.discoveryId} was not found for this connection.`);
    if (discovery.configVersion !== row.configVersion) {
      throw new AppError(
        "discovery_stale",
        "That discovery was made before the endpoint or authentication changed; discover again and approve from the new result.",
      );
    }
    const byName = new Map(discovery.tools.map((t) => [t.name, t]));
    const unknown = names.filter((n) => !byName.has(n));
    if (unknown.length) {
      throw new AppError("unknown_tool", `Not in this discovery: ${unknown.slice(0, 10).join(", ")}.`, {
        toolNames: unknown,
      });
    }
    const refused = names.flatMap((n) => {
      const tool = byName.get(n);
      return tool && !tool.approvable ? [{ name: n, reason: tool.reason ?? "not approvable" }] : [];
    });
    if (refused.length) {
      throw new AppError(
        "tool_not_approvable",
        `These tools cannot be approved: ${refused
          .slice(0, 5)
          .map((t) => `${t.name} (${t.reason})`)
          .join("; ")}.`,
        { tools: refused },
      );
    }
    const manifest: ToolDefinition[] = names
      .flatMap((n) => {
        const tool = byName.get(n);
        return tool ? [canonicalTool(tool)] : [];
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (row.enabled) {
      await assertEnvironmentRoom(tx, {
        environmentId: row.environmentId,
        connectionId: row.id,
        approvedToolCount: manifest.length,
      });
    }
    const manifestHash = hashManifest(manifest);
    const now = ctx.deps.clock();
    const revision = row.revision + 1;
    const audit = auditRows(tx, ctx, [
      {
        action: "mcp_connection.tools_approved",
        targetType: "mcp_connection",
        targetId: row.id,
        environmentId: row.environmentId,
        details: {
          revision,
          discoveryId: discovery.id,
          toolNames: names,
          manifestHash,
          readTools: manifest.filter((t) => toolAccess(t, attested) === "read").map((t) => t.name),
          attestedReadOnly: attested,
        },
      },
      ...(attested.length
        ? [
            {
              action: "mcp_connection.tools_attested_read_only" as const,
              targetType: "mcp_connection",
              targetId: row.id,
              environmentId: row.environmentId,
              details: { revision, manifestHash, toolNames: attested },
            },
          ]
        : []),
    ]);
    const next = await bumpRevision(
      tx,
      row,
      {
        approvedAt: now,
        approvedBy: member.userId,
        approvedConfigVersion: row.configVersion,
        approvedManifest: manifest,
        approvedManifestHash: manifestHash,
        approvedToolCount: manifest.length,
        attestedReadTools: attested,
      },
      now,
      audit,
    );
    return toListedConnection(next);
  });
}
