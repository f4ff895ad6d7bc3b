import { z } from "zod";
import { deleteConnection } from "../../../../features/connections/delete-connection.ts";
import { previewConnectionDeletion } from "../../../../features/connections/preview-connection-deletion.ts";
import { DeletionPreviewSchema } from "../../../../features/connections/schemas.ts";
import { defineTool } from "../../tool.ts";
import { connectionNextStep, connectionRef, revision } from "./shared.ts";

export const previewConnectionDeletionTool = defineTool({
  name: "preview_mcp_connection_deletion",
  title: "Preview an MCP connection's deletion",
  description:
    "Shows what deleting the connection would destroy (approved tools, credential, running tasks affected) and returns a receipt for delete_mcp_connection: single use, 5 minutes, bound to this revision. Changes nothing else.",
  access: "write",
  input: { ...connectionRef, revision },
  output: { preview: DeletionPreviewSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    const preview = await previewConnectionDeletion({ ctx, input });
    const e = preview.effects;
    const text =
      `Deleting ${input.connectionId} would remove ${e.approvedToolCount} approved tool(s), ` +
      `${e.credentialDestroyed ? "destroy the stored credential" : "destroy no credential"} and affect ` +
      `${e.runningTasksAffected} running task(s). To confirm, call delete_mcp_connection with receipt ` +
      `${preview.receipt} and revision ${input.revision} before ${preview.expiresAt}.`;
    return { text, data: { preview } };
  },
});

export const deleteConnectionTool = defineTool({
  name: "delete_mcp_connection",
  title: "Delete an MCP connection",
  description:
    "Deletes a disabled connection with its credential, discoveries and approval, confirmed by the receipt from preview_mcp_connection_deletion for the same revision. Cannot be undone.",
  access: "write",
  input: {
    ...connectionRef,
    revision,
    receipt: z
      .string()
      .min(1)
      .max(256)
      .describe("The receipt from preview_mcp_connection_deletion (single use, 5 minutes, this revision)."),
  },
  output: {
    deleted: z.literal(true),
    connectionId: z.string().describe("The deleted connection's id."),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    await deleteConnection({ ctx, input });
    return {
      text: `Deleted connection ${input.connectionId}.`,
      data: { deleted: true as const, connectionId: input.connectionId },
    };
  },
});
