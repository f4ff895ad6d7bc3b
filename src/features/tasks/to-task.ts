import type { tasks } from "../../platform/db/schema/tasks.ts";
import type { Task } from "./schemas.ts";

/** The public view: snapshot summary without schemas (they can be large), never secrets. */
export const toTask = (row: typeof tasks.$inferSelect): Task => ({
  id: row.id,
  environmentId: row.environmentId,
  kind: row.kind,
  instructions: row.instructions,
  status: row.status,
  errorCode: row.errorCode,
  errorMessage: row.errorMessage,
  summary: row.summary,
  snapshot: {
    takenAt: row.snapshot.takenAt,
    connections: row.snapshot.connections,
    tools: row.snapshot.tools.map((t) => ({
      modelName: t.modelName,
      connectionId: t.connectionId,
      toolName: t.toolName,
      ...(t.description !== undefined ? { description: t.description } : {}),
    })),
  },
  budgets: row.budgets,
  usage: row.usage,
  createdAt: row.createdAt.toISOString(),
  startedAt: row.startedAt?.toISOString() ?? null,
  finishedAt: row.finishedAt?.toISOString() ?? null,
});
