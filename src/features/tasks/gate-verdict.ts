import type { SnapshotConnection } from "../../db/schema/tasks.ts";
import { AppError } from "../../errors.ts";

/** What the gate compares with the task's frozen connection. */
export type GateFields = { enabled: boolean; revision: number; approvedManifestHash: string | null };

/**
 * The gate's verdict (spec part 1A, task rule 2): the connection still exists in the task's
 * organisation and environment (`row` found by a scoped read), is enabled, and its revision and
 * approved manifest hash are the ones the task froze. Any difference is `connection_changed`.
 */
export function gateRefusal(row: GateFields | undefined, frozen: SnapshotConnection): AppError | undefined {
  const reason = !row
    ? "it was deleted"
    : !row.enabled
      ? "it was disabled"
      : row.approvedManifestHash !== frozen.manifestHash
        ? "its approved tools changed"
        : row.revision !== frozen.revision
          ? "its configuration changed"
          : undefined;
  if (!reason) return undefined;
  return new AppError(
    "connection_changed",
    `Connection "${frozen.alias}" changed after this task started (${reason}); start a new task to use its current configuration.`,
    { connectionId: frozen.connectionId, nextAction: "start_new_task" },
  );
}
