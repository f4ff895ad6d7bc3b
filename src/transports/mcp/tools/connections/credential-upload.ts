import { z } from "zod";
import { prepareCredentialUpload } from "../../../../features/credential-uploads/prepare-credential-upload.ts";
import { defineTool } from "../../tool.ts";
import { connectionNextStep, connectionRef, revision } from "./shared.ts";

const UploadSchema = z.object({
  requestId: z.string(),
  status: z.enum(["pending", "completed", "failed", "expired"]),
  connectionId: z.string(),
  revision: z.number().int(),
  expiresAt: z.string(),
  url: z.string().optional(),
  errorCode: z.string().optional(),
});

export const prepareCredentialUploadTool = defineTool({
  name: "prepare_mcp_connection_credential_upload",
  title: "Prepare a credential upload in the browser",
  description:
    "Creates a single-use browser link, alive 10 minutes, where you (the signed-in owner or admin who calls this) type the connection's credential into patchbay directly — it never passes through this MCP client. Bound to you, the connection and its revision. Call again with the requestId to poll: pending | completed | failed | expired.",
  access: "write",
  input: {
    ...connectionRef,
    revision: revision
      .optional()
      .describe("The connection's current revision; required to prepare a new upload."),
    requestId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe("Poll an upload prepared earlier (`cup_…`) instead of preparing a new one."),
  },
  output: { upload: UploadSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    const upload = await prepareCredentialUpload({ ctx, input });
    const text = upload.url
      ? `Open ${upload.url} in a browser signed in to patchbay as yourself and enter the credential there (expires ${upload.expiresAt}). Then call this tool again with requestId ${upload.requestId} until the status is completed.`
      : upload.status === "pending"
        ? `Upload ${upload.requestId} is pending: the link has not been used yet (expires ${upload.expiresAt}). Poll again shortly.`
        : upload.status === "completed"
          ? `Upload ${upload.requestId} completed: the credential is set. Next: get_mcp_connection for the new revision.`
          : upload.status === "failed"
            ? `Upload ${upload.requestId} failed (${upload.errorCode ?? "unknown"}). Prepare a new upload to try again.`
            : `Upload ${upload.requestId} expired unused. Prepare a new upload.`;
    return { text, data: { upload } };
  },
});
