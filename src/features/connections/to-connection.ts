import type { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import type { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import { approvalIsStale, deriveReadiness, hasCredential, needsCredential, nextSteps } from "./readiness.ts";
import type { Connection } from "./schemas.ts";

type Row = typeof mcpConnections.$inferSelect;
type DiscoveryRow = Pick<
  typeof mcpDiscoveries.$inferSelect,
  "id" | "discoveredAt" | "toolCount" | "manifestHash"
>;

/** The public view. Never the endpoint URL, the credential or any vault reference. */
export function toConnection(row: Row, discovery: DiscoveryRow | null | undefined): Connection {
  const readiness = deriveReadiness(row);
  return {
    id: row.id,
    environmentId: row.environmentId,
    alias: row.alias,
    displayName: row.displayName,
    endpointOrigin: row.endpointOrigin,
    auth: {
      kind: row.authKind,
      ...(row.authKind === "api_key" && row.authHeaderName ? { headerName: row.authHeaderName } : {}),
      credentialReady: needsCredential(row) ? hasCredential(row) : true,
      credentialUpdatedAt: row.credentialUpdatedAt?.toISOString() ?? null,
    },
    enabled: row.enabled,
    readiness,
    nextStep: nextSteps[readiness],
    revision: row.revision,
    discovery: discovery
      ? {
          id: discovery.id,
          discoveredAt: discovery.discoveredAt.toISOString(),
          toolCount: discovery.toolCount,
          manifestHash: discovery.manifestHash,
        }
      : null,
    approval:
      row.approvedManifestHash && row.approvedAt
        ? {
            approvedAt: row.approvedAt.toISOString(),
            approvedBy: row.approvedBy ?? "",
            toolCount: row.approvedToolCount,
            manifestHash: row.approvedManifestHash,
            stale: approvalIsStale(row),
          }
        : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
