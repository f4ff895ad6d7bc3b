import type { Command } from "commander";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import { confirm } from "./confirm.ts";
import { addMutationOptions, type MutationFlags, mutationHeaders, openMcpSession } from "./mcp-session.ts";
import { type DeletionPreview, previewText } from "./mcp-view.ts";

type DeleteFlags = MutationFlags & { yes?: boolean };

export function registerMcpDeleteCommand(mcp: Command): void {
  addMutationOptions(
    mcp
      .command("delete")
      .description("Preview the effects of deleting a disabled connection, confirm, then delete it")
      .argument("<connection-id>", "e.g. mcp_…")
      .option("--yes", "delete without asking (required when stdin is not a terminal)"),
  ).action(async (id: string, flags: DeleteFlags) => {
    const session = openMcpSession(flags, id);
    const revision = session.revision(flags);
    // Refuse before previewing: a script without --yes must not half-run.
    if (!flags.yes && !process.stdin.isTTY) {
      throw usageError("refusing to delete without confirmation: stdin is not a terminal; pass --yes");
    }
    const key = session.idempotencyKey(flags);
    // The preview is a different request, so it gets its own key derived from the reported one.
    const preview = (await session.request({
      method: "POST",
      path: session.path("/deletion-previews"),
      headers: mutationHeaders(`${key}:preview`, revision),
    })) as DeletionPreview;
    const effects = `Deletion preview for ${id}:\n${previewText(preview)}`;
    if (!session.json) session.print(effects);
    else if (!flags.yes) process.stderr.write(effects); // the prompt must not ask blind
    if (!flags.yes && !(await confirm(`Delete ${id}?`))) {
      throw new CliError("not_confirmed", `${id} was not deleted`, exitCodes.other);
    }
    await session.request({
      method: "DELETE",
      path: session.path(),
      headers: { ...mutationHeaders(key, revision), "deletion-receipt": preview.receipt },
    });
    // DELETE answers 204; the JSON mode reports what was deleted and what it took along.
    if (session.json) return session.printJson({ id, deleted: true, effects: preview.effects });
    session.print(`Deleted ${id}.\n`);
  });
}
