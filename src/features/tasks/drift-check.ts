import { and, eq } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { type SnapshotConnection, taskConnectionChecks } from "../../platform/db/schema/tasks.ts";
import type { RemoteSession } from "../../platform/mcp-client/remote-session.ts";
import { hashTool } from "../../platform/mcp-client/tool-hash.ts";
import type { RunningTask } from "./gate.ts";

/**
 * On a task's first call to a connection, the server's live `tools/list` is compared with the
 * approved tools the task froze: an approved tool that is missing, renamed or different in any
 * hashed field is drift, and every call of this task to that connection is then refused with
 * `manifest_changed`. Tools the server added are not drift — they were never approved, so the
 * task cannot call them. The verdict is stored, so it holds across workers and restarts.
 */
export async function ensureManifestMatches(args: {
  db: Db;
  task: RunningTask;
  frozen: SnapshotConnection;
  session: RemoteSession;
  now: Date;
}): Promise<void> {
  const { db, task, frozen } = args;
  const key = and(
    eq(taskConnectionChecks.taskId, task.id),
    eq(taskConnectionChecks.connectionId, frozen.connectionId),
  );
  let [check] = await db.select().from(taskConnectionChecks).where(key).limit(1);
  if (!check) {
    const remote = new Map((await args.session.listTools()).map((tool) => [tool.name, hashTool(tool)]));
    const drifted = task.snapshot.tools
      .filter((t) => t.connectionId === frozen.connectionId)
      .filter(
        (t) =>
          remote.get(t.toolName) !==
          hashTool({
            name: t.toolName,
            title: t.title,
            description: t.description,
            inputSchema: t.inputSchema,
            outputSchema: t.outputSchema,
            annotations: t.annotations,
          }),
      );
    const [inserted] = await db
      .insert(taskConnectionChecks)
      .values({
        taskId: task.id,
        connectionId: frozen.connectionId,
        result: drifted.length ? "manifest_changed" : "match",
        checkedAt: args.now,
      })
      .onConflictDoNothing()
      .returning();
    // Another worker stored its verdict first: the stored one holds.
    [check] = inserted ? [inserted] : await db.select().from(taskConnectionChecks).where(key).limit(1);
  }
  if (check?.result === "manifest_changed") {
    throw new AppError(
      "manifest_changed",
      `The tools of connection "${frozen.alias}" changed on the server since they were approved; an owner must discover and approve again, then start a new task.`,
      { connectionId: frozen.connectionId, nextAction: "start_new_task" },
    );
  }
}
