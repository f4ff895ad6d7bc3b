import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { and, asc, eq } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import type { TaskSnapshot } from "../../platform/db/schema/tasks.ts";
import { MAX_TASK_SNAPSHOT_BYTES } from "../../platform/mcp-client/bounds.ts";
import { deriveReadiness, toolAccess } from "../connections/index.ts";

/**
 * Resolves the ready connections of exactly this organisation and environment (no fallback to
 * other environments) and freezes their approved tools. The snapshot holds definitions and the
 * connection's revision and manifest hash — never the endpoint, credential or a client.
 */
export async function takeSnapshot(
  db: Db,
  scope: { organizationId: string; environmentId: string },
  opts: { now: Date; reservedNames: readonly string[] },
): Promise<TaskSnapshot> {
  const rows = await db
    .select()
    .from(mcpConnections)
    .where(
      and(
        eq(mcpConnections.organizationId, scope.organizationId),
        eq(mcpConnections.environmentId, scope.environmentId),
      ),
    )
    .orderBy(asc(mcpConnections.alias));
  const ready = rows.filter(
    (row) => deriveReadiness(row) === "ready" && row.approvedManifest && row.approvedManifestHash,
  );
  const pairs = ready.flatMap((row) =>
    (row.approvedManifest ?? []).map((tool) => ({
      tool,
      access: toolAccess(tool, row.attestedReadTools),
      connectionId: row.id,
      alias: row.alias,
      toolName: tool.name,
    })),
  );
  const names = assignModelToolNames(pairs, opts.reservedNames);
  const snapshot: TaskSnapshot = {
    takenAt: opts.now.toISOString(),
    connections: ready.map((row) => ({
      connectionId: row.id,
      alias: row.alias,
      revision: row.revision,
      manifestHash: row.approvedManifestHash ?? "",
    })),
    tools: pairs.map(({ tool, access, connectionId }, i) => ({
      modelName: names[i] ?? "",
      connectionId,
      toolName: tool.name,
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
      ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
      access,
    })),
  };
  const bytes = Buffer.byteLength(canonicalize(snapshot) ?? "");
  if (bytes > MAX_TASK_SNAPSHOT_BYTES) {
    throw new AppError(
      "snapshot_limit_exceeded",
      `The environment's approved tools need ${bytes} bytes, over the task snapshot bound of ${MAX_TASK_SNAPSHOT_BYTES}. Approve fewer tools or tools with smaller schemas.`,
      { limit: MAX_TASK_SNAPSHOT_BYTES, observed: bytes },
    );
  }
  return snapshot;
}

/**
 * Model-facing names: `<alias>__<tool>` with other characters mapped to `_` (`[A-Za-z0-9_-]{1,64}`
 * is what Anthropic, OpenAI and Gemini all accept). Too long or already taken (`.` vs `_`, a
 * built-in's name): shortened and suffixed with a hash of the exact pair, so names stay unique,
 * deterministic and ≤ 64 characters.
 */
function assignModelToolNames(
  pairs: readonly { connectionId: string; alias: string; toolName: string }[],
  reserved: readonly string[],
): string[] {
  const taken = new Set(reserved);
  return pairs.map((pair) => {
    const plain = `${pair.alias}__${pair.toolName}`.replace(/[^A-Za-z0-9_-]/g, "_");
    let name = plain;
    if (name.length > 64 || taken.has(name)) {
      const suffix = createHash("sha256")
        .update(`${pair.connectionId}\0${pair.toolName}`)
        .digest("hex")
        .slice(0, 10);
      name = `${plain.slice(0, 64 - suffix.length - 1)}_${suffix}`;
    }
    taken.add(name);
    return name;
  });
}
