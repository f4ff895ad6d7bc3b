import { inArray } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import type { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import { users } from "../../platform/db/schema/users.ts";
import type { Connection, Health, Readiness } from "./schemas.ts";
import { toolAccess } from "./tool-access.ts";

type Row = typeof mcpConnections.$inferSelect;
type DiscoveryRow = Pick<
  typeof mcpDiscoveries.$inferSelect,
  "id" | "discoveredAt" | "toolCount" | "manifestHash"
>;

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
export function deriveReadiness(row: Row): Readiness {
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
  row: Row,
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
            tools: (row.approvedManifest ?? []).map((tool) => ({
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

function toHealth(row: Row): Health {
  return {
    lastSuccessAt: row.lastSuccessAt?.toISOString() ?? null,
    lastFailureAt: row.lastFailureAt?.toISOString() ?? null,
    lastFailureCode: row.lastFailureCode,
    consecutiveFailures: row.consecutiveFailures,
    credentialRejected: row.credentialRejectedAt !== null,
    credentialRejectedAt: row.credentialRejectedAt?.toISOString() ?? null,
  };
}

/** The latest discoveries' summaries of these rows, by id (one query for them all). */
async function latestDiscoveries(db: Db, rows: Row[]): Promise<Map<string, DiscoveryRow>> {
  const ids = rows.flatMap((r) => (r.latestDiscoveryId ? [r.latestDiscoveryId] : []));
  const discoveries = ids.length
    ? await db
        .select({
          id: mcpDiscoveries.id,
          discoveredAt: mcpDiscoveries.discoveredAt,
          toolCount: mcpDiscoveries.toolCount,
          manifestHash: mcpDiscoveries.manifestHash,
        })
        .from(mcpDiscoveries)
        .where(inArray(mcpDiscoveries.id, ids))
    : [];
  return new Map(discoveries.map((d) => [d.id, d]));
}

/**
 * The approvers' emails, by user id (one query for them all): people read who approved as an
 * email, not an id.
 */
export async function approverEmails(db: Db, rows: Pick<Row, "approvedBy">[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.flatMap((r) => (r.approvedBy ? [r.approvedBy] : [])))];
  const found = ids.length
    ? await db.select({ id: users.id, email: users.email }).from(users).where(inArray(users.id, ids))
    : [];
  return new Map(found.map((u) => [u.id, u.email]));
}

/** The public views, each with its latest discovery's summary and its approver's email. */
export async function viewConnections(db: Db, rows: Row[]): Promise<Connection[]> {
  // One after the other: `db` may be a transaction, whose connection runs one query at a time.
  const latest = await latestDiscoveries(db, rows);
  const emails = await approverEmails(db, rows);
  return rows.map((row) =>
    toConnection(row, latest.get(row.latestDiscoveryId ?? ""), emails.get(row.approvedBy ?? "") ?? null),
  );
}

export async function viewConnection(db: Db, row: Row): Promise<Connection> {
  const discovery = (await latestDiscoveries(db, [row])).get(row.latestDiscoveryId ?? "");
  return toConnection(row, discovery, await approverEmail(db, row));
}

/** The approver's email of one connection, if it has an approval. */
export async function approverEmail(db: Db, row: Pick<Row, "approvedBy">): Promise<string | null> {
  return (await approverEmails(db, [row])).get(row.approvedBy ?? "") ?? null;
}
