import { and, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { mcpConnections, type ToolDefinition } from "../../platform/db/schema/mcp-connections.ts";
import type { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import type { Connection, Health, Readiness } from "./schemas.ts";
import { toolAccess } from "./tool-access.ts";

type Row = typeof mcpConnections.$inferSelect;
type DiscoveryRow = Pick<
  typeof mcpDiscoveries.$inferSelect,
  "id" | "discoveredAt" | "toolCount" | "manifestHash"
>;
/** What the view reads of an approved tool: its name, and its annotations for the access class. */
type ViewedTool = Pick<ToolDefinition, "name" | "annotations">;
/**
 * What the public view reads of a connection: every column but the endpoint URL, the credential's
 * version, the organisation and the latest discovery's id, and of the approved manifest only each
 * tool's name and annotations (a whole row fits, too).
 */
export type ViewedRow = Omit<
  Row,
  "endpointUrl" | "credentialVersion" | "organizationId" | "latestDiscoveryId" | "approvedManifest"
> & { approvedManifest: ViewedTool[] | null };

export const needsCredential = (row: Pick<Row, "authKind">): boolean => row.authKind !== "none";
export const hasCredential = (row: Pick<Row, "credentialUpdatedAt">): boolean =>
  row.credentialUpdatedAt !== null;
export const hasApproval = (row: Pick<Row, "approvedManifestHash">): boolean =>
  row.approvedManifestHash !== null;
/** Endpoint or auth changed after approval: the approved manifest was made for another server. */
export const approvalIsStale = (
  row: Pick<Row, "approvedManifestHash" | "approvedConfigVersion" | "configVersion">,
) => row.approvedManifestHash !== null && row.approvedConfigVersion !== row.configVersion;

/**
 * Derived, never stored. DESIGN §5 precedence: the first condition that holds wins, because it
 * names the next step the owner has to take.
 */
export function deriveReadiness(
  row: Pick<
    Row,
    | "authKind"
    | "credentialUpdatedAt"
    | "approvedManifestHash"
    | "approvedConfigVersion"
    | "configVersion"
    | "enabled"
  >,
): Readiness {
  if (needsCredential(row) && !hasCredential(row)) return "credential_missing";
  if (!hasApproval(row)) return "approval_missing";
  if (approvalIsStale(row)) return "approval_stale";
  if (!row.enabled) return "disabled";
  return "ready";
}

const nextSteps: Record<Readiness, string> = {
  ready: "Start a new task in this environment.",
  disabled: "Enable after reviewing the current approval.",
  credential_missing: "Attach or replace the credential.",
  approval_missing: "Discover, select, approve.",
  approval_stale: "Discover and approve the current manifest again.",
};

/** The public view. Never the endpoint URL, the credential or any vault reference. */
export function toConnection(
  row: ViewedRow,
  discovery: DiscoveryRow | null | undefined,
  approverEmail: string | null = null,
): Connection {
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
            approvedByEmail: approverEmail,
            toolCount: row.approvedToolCount,
            manifestHash: row.approvedManifestHash,
            stale: approvalIsStale(row),
            tools: (row.approvedManifest ?? []).map((tool: ViewedTool) => ({
              name: tool.name,
              access: toolAccess(tool, row.attestedReadTools),
              attested: row.attestedReadTools.includes(tool.name),
            })),
          }
        : null,
    health: toHealth(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toHealth(row: ViewedRow): Health {
  return {
    lastSuccessAt: row.lastSuccessAt?.toISOString() ?? null,
    lastFailureAt: row.lastFailureAt?.toISOString() ?? null,
    lastFailureCode: row.lastFailureCode,
    consecutiveFailures: row.consecutiveFailures,
    credentialRejected: row.credentialRejectedAt !== null,
    credentialRejectedAt: row.credentialRejectedAt?.toISOString() ?? null,
  };
}

const {
  endpointUrl: _endpointUrl,
  credentialVersion: _credentialVersion,
  organizationId: _organizationId,
  latestDiscoveryId: _latestDiscoveryId,
  approvedManifest: _approvedManifest,
  ...viewedColumns
} = getTableColumns(mcpConnections);

/** The latest discovery's summary as one jsonb object (its time in epoch milliseconds). */
type DiscoverySummary = { id: string; discoveredAtMs: number; toolCount: number; manifestHash: string };

/**
 * What a list of connections reads (`readPage`'s columns): the view's columns, with the latest
 * discovery's summary and the approver's email looked up in the same query, and of the approved
 * manifest only the tools' names and annotations. A manifest carries every tool's schemas and
 * descriptions; read whole, parsing it was the largest part of a page's CPU
 * (docs/performance.md, "REST API").
 */
export const listedConnectionColumns = {
  ...viewedColumns,
  // json, not jsonb: built as text, it costs PostgreSQL less than building jsonb.
  approvedManifest: sql<ViewedTool[] | null>`(
    select json_agg(
      case when t.tool ? 'annotations'
        then json_build_object('name', t.tool -> 'name', 'annotations', t.tool -> 'annotations')
        else json_build_object('name', t.tool -> 'name') end
      order by t.n)
    from jsonb_array_elements(mcp_connections.approved_manifest) with ordinality as t(tool, n))`,
  discovery: discoverySummary(sql`mcp_connections.latest_discovery_id`),
  approverEmail: emailOf(sql`mcp_connections.approved_by`),
};

/** The summary of the discovery `id` names (a column, or a value). */
function discoverySummary(id: SQL | string | null) {
  return sql<DiscoverySummary | null>`(
    select json_build_object(
      'id', d.id, 'discoveredAtMs', round(extract(epoch from d.discovered_at) * 1000),
      'toolCount', d.tool_count, 'manifestHash', d.manifest_hash)
    from mcp_discoveries d where d.id = ${id} and d.connection_id = mcp_connections.id)`;
}

/** The email of the user `id` names (a column, or a value). */
function emailOf(id: SQL | string | null) {
  return sql<string | null>`(select u.email from users u where u.id = ${id})`;
}

/** A row read with `listedConnectionColumns`: what `toListedConnection` makes the view of. */
export type ListedRow = ViewedRow & { discovery: DiscoverySummary | null; approverEmail: string | null };

/** The public view of a row read with `listedConnectionColumns`. */
export const toListedConnection = (row: ListedRow): Connection =>
  toConnection(
    row,
    row.discovery && {
      id: row.discovery.id,
      discoveredAt: new Date(row.discovery.discoveredAtMs),
      toolCount: row.discovery.toolCount,
      manifestHash: row.discovery.manifestHash,
    },
    row.approverEmail,
  );

/**
 * The public view of a connection row already read whole (a GET, a change that kept the row as
 * it was): one query for what the row does not hold, the summary of the discovery it names and
 * its approver's email — by the ids `row` holds, so the answer is that row's even when a change
 * commits in between. Matched on the organisation too, so an id alone never reads another
 * tenant's row.
 */
export async function viewConnection(db: Db, row: Row): Promise<Connection> {
  const [extra] = await db
    .select({
      discovery: discoverySummary(row.latestDiscoveryId),
      approverEmail: emailOf(row.approvedBy),
    })
    .from(mcpConnections)
    .where(and(eq(mcpConnections.id, row.id), eq(mcpConnections.organizationId, row.organizationId)))
    .limit(1);
  // Outside a transaction the row can be deleted between the caller's read and this one.
  if (!extra) throw new AppError("not_found", `MCP connection ${row.id} was not found in this environment.`);
  return toListedConnection({ ...row, ...extra });
}
