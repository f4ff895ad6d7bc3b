import { and, eq, ne } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { deriveReadiness } from "./view-connection.ts";

/** Spec part 8. */
export const MAX_READY_CONNECTIONS = 8;
export const MAX_READY_TOOLS = 64;
export const MAX_APPROVED_TOOLS = 128;

/**
 * Refuses a change that would leave the environment with more than 8 ready connections or 64
 * ready tools. Call inside a transaction that holds the environment row lock, so two
 * concurrent enables cannot both pass the check.
 */
export async function assertEnvironmentRoom(
  tx: Db,
  args: { environmentId: string; connectionId: string; approvedToolCount: number },
): Promise<void> {
  const others = await tx
    .select()
    .from(mcpConnections)
    .where(
      and(eq(mcpConnections.environmentId, args.environmentId), ne(mcpConnections.id, args.connectionId)),
    );
  const ready = others.filter((row) => deriveReadiness(row) === "ready");
  if (ready.length + 1 > MAX_READY_CONNECTIONS) {
    throw new AppError(
      "limit_exceeded",
      `An environment may have at most ${MAX_READY_CONNECTIONS} ready connections; it has ${ready.length}. Disable one first.`,
      { limit: MAX_READY_CONNECTIONS, current: ready.length, requested: 1, resource: "ready_connections" },
    );
  }
  const readyTools = ready.reduce((sum, row) => sum + row.approvedToolCount, 0);
  if (readyTools + args.approvedToolCount > MAX_READY_TOOLS) {
    throw new AppError(
      "limit_exceeded",
      `An environment may have at most ${MAX_READY_TOOLS} ready tools; it has ${readyTools} and this connection adds ${args.approvedToolCount}. Approve fewer tools or disable another connection.`,
      {
        limit: MAX_READY_TOOLS,
        current: readyTools,
        requested: args.approvedToolCount,
        resource: "ready_tools",
      },
    );
  }
}
