import { z } from "zod";
import { AppError } from "../../../../errors.ts";
import { approveConnectionTools } from "../../../../features/connections/approve-connection-tools.ts";
import { createConnection } from "../../../../features/connections/create-connection.ts";
import {
  deleteConnection,
  previewConnectionDeletion,
} from "../../../../features/connections/delete-connection.ts";
import { discoverConnectionTools } from "../../../../features/connections/discover-connection-tools.ts";
import { getConnection, listConnections } from "../../../../features/connections/read-connections.ts";
import {
  ApproveBody,
  ConnectionSchema,
  CreateConnectionBody,
  DeletionPreviewSchema,
  DiscoverySchema,
  EnablementBody,
} from "../../../../features/connections/schemas.ts";
import { setConnectionEnabled } from "../../../../features/connections/set-connection-enabled.ts";
import { updateConnection } from "../../../../features/connections/update-connection.ts";
import { prepareCredentialUpload } from "../../../../features/credential-uploads/prepare-credential-upload.ts";
import { listCallApprovals } from "../../../../features/tasks/call-approvals.ts";
import { CallApprovalSchema } from "../../../../features/tasks/schemas.ts";
import { defineTool, type RegistrableTool } from "../../tool.ts";
import { connectionNextStep, connectionRef, describeConnection, environmentId, revision } from "./shared.ts";

// The REST body's own field schemas, so MCP validates exactly like REST.
const fields = CreateConnectionBody.shape;
const auth = fields.auth.describe(
  'How patchbay authenticates to the server: {"kind":"none"}, {"kind":"bearer"} or {"kind":"api_key","headerName":"X-Api-Key"}. The credential itself is never given here; attach it with the patchbay CLI or the REST API afterwards.',
);
const displayName = fields.displayName.describe("Human-readable name, one line, up to 100 characters.");
const endpointUrl = fields.endpointUrl.describe(
  "The server's MCP Streamable HTTP URL: public https://, port 443, no query, fragment, credentials or redirect. Only its origin is shown back.",
);

/** Names shown in a discovery's text line; the full list is in the structured result. */
const LISTED_NAMES = 50;

const UploadSchema = z.object({
  requestId: z.string(),
  status: z.enum(["pending", "completed", "failed", "expired"]),
  connectionId: z.string(),
  revision: z.number().int(),
  expiresAt: z.string(),
  url: z.string().optional(),
  errorCode: z.string().optional(),
});

/**
 * The inbound MCP management tools (spec 4C), in the order `tools/list` shows them. Each calls
 * the same verb as its REST route; `prepare_mcp_connection_credential_upload` hands the
 * credential step to the web UI, where the signed-in owner types it (no tool accepts a credential).
 */
export const connectionTools: readonly RegistrableTool[] = [
  defineTool({
    name: "list_mcp_connections",
    title: "List MCP connections",
    description:
      "Lists the environment's MCP connections with their readiness and next step (same as GET /api/v1/environments/{environmentId}/mcp-connections). Paginated: pass nextCursor as cursor.",
    access: "read",
    input: {
      environmentId,
      pageSize: z
        .number()
        .int()
        .min(1)
        .max(200)
        .default(50)
        .describe("Connections per page, 1–200 (default 50)."),
      cursor: z
        .string()
        .max(512)
        .optional()
        .describe("nextCursor from the previous page; omit for the first page."),
    },
    output: {
      items: z.array(ConnectionSchema),
      nextCursor: z.string().nullable().describe("Pass as cursor for the next page; null on the last page."),
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    nextStep: connectionNextStep,
    async run(input, ctx) {
      const page = await listConnections({ ctx, input });
      const lines = page.items.map((c) => `- ${describeConnection(c)}`);
      const more = page.nextCursor ? `\nMore: call again with cursor ${page.nextCursor}.` : "";
      const head = `${page.items.length} connection(s) on this page.`;
      return { text: [head, ...lines].join("\n") + more, data: page };
    },
  }),
  defineTool({
    name: "get_mcp_connection",
    title: "Get an MCP connection",
    description:
      "Reads one connection: its revision (needed by every change), readiness, next step, latest discovery and approval. The endpoint path and any credential are never shown.",
    access: "read",
    input: connectionRef,
    output: { connection: ConnectionSchema },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    nextStep: connectionNextStep,
    async run(input, ctx) {
      const connection = await getConnection({ ctx, input });
      return { text: describeConnection(connection), data: { connection } };
    },
  }),
  defineTool({
    name: "create_mcp_connection",
    title: "Create an MCP connection",
    description:
      "Creates a connection to a remote MCP server in the environment: disabled, without credential, revision 1. Does not contact the server; discover_mcp_connection_tools does.",
    access: "write",
    input: {
      environmentId,
      alias: fields.alias.describe(
        "Stable alias, unique in the environment and immutable: 1–40 of a-z 0-9 _ -, starting with a letter or digit.",
      ),
      displayName,
      endpointUrl,
      auth,
    },
    output: { connection: ConnectionSchema },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    nextStep: connectionNextStep,
    async run(input, ctx) {
      const connection = await createConnection({ ctx, input });
      return { text: `Created ${describeConnection(connection)}`, data: { connection } };
    },
  }),
  defineTool({
    name: "update_mcp_connection",
    title: "Update an MCP connection",
    description:
      "Changes displayName, endpointUrl or auth (alias is immutable). Changing endpointUrl or auth needs a disabled connection and makes the approval stale; changing the auth kind, or moving to another origin, destroys the stored credential.",
    access: "write",
    input: {
      ...connectionRef,
      revision,
      displayName: displayName.optional(),
      endpointUrl: endpointUrl.optional(),
      auth: auth.optional(),
    },
    output: { connection: ConnectionSchema },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    nextStep: connectionNextStep,
    async run(input, ctx) {
      if (input.displayName === undefined && input.endpointUrl === undefined && input.auth === undefined) {
        throw new AppError(
          "invalid_request",
          "Give at least one of displayName, endpointUrl, auth (alias is immutable).",
        );
      }
      const connection = await updateConnection({ ctx, input });
      return { text: `Updated ${describeConnection(connection)}`, data: { connection } };
    },
  }),
  defineTool({
    name: "discover_mcp_connection_tools",
    title: "Discover a connection's tools",
    description:
      "Connects to the remote server (through patchbay's protected egress) and lists its tools for review: name, description, schemas, annotations, and whether each can be approved. Stores the result as a discovery; does not change the revision.",
    access: "write",
    input: { ...connectionRef, revision },
    output: { discovery: DiscoverySchema },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    nextStep: connectionNextStep,
    async run(input, ctx) {
      const discovery = await discoverConnectionTools({ ctx, input });
      const names = discovery.tools
        .slice(0, LISTED_NAMES)
        .map((t) =>
          t.approvable ? `${t.name} [${t.access}]` : `${t.name} (not approvable: ${t.reason ?? "refused"})`,
        );
      const more =
        discovery.tools.length > LISTED_NAMES ? `, … ${discovery.tools.length - LISTED_NAMES} more` : "";
      const text =
        `Discovered ${discovery.tools.length} tool(s), discoveryId ${discovery.id}: ${names.join(", ")}${more}. ` +
        `Next: approve_mcp_connection_tools with this discoveryId, the chosen toolNames and revision ${input.revision}. ` +
        "Approved [read] tools are the agent's to call on its own; every call of a [write] tool waits for an owner or admin to approve it.";
      return { text, data: { discovery } };
    },
  }),
  defineTool({
    name: "approve_mcp_connection_tools",
    title: "Approve a connection's tools",
    description:
      "Approves 1–128 approvable tools of a discovery made under the connection's current configuration; the approval replaces any previous one. Approval does not enable the connection. A tool is `read` (the task agent may call it on its own) only when its annotations say readOnlyHint and not destructiveHint, or when you attest it in attestReadOnly; every other tool is `write`: each of its calls waits for an owner or admin to approve it in the web UI.",
    access: "write",
    input: {
      ...connectionRef,
      revision,
      discoveryId: ApproveBody.shape.discoveryId.describe(
        "The discovery's id (`dsc_…`) from discover_mcp_connection_tools.",
      ),
      toolNames: ApproveBody.shape.toolNames.describe(
        "Names of the tools to approve, from that discovery (approvable ones only). Name write tools only when a person will approve each of their calls.",
      ),
      attestReadOnly: ApproveBody.shape.attestReadOnly.describe(
        "Approved tools you attest only read although their annotations do not say so; recorded in the audit trail under your name.",
      ),
    },
    output: { connection: ConnectionSchema },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    nextStep: connectionNextStep,
    async run(input, ctx) {
      const connection = await approveConnectionTools({ ctx, input });
      const tools = connection.approval?.tools ?? [];
      const write = tools.filter((t) => t.access === "write").map((t) => t.name);
      const warning = write.length
        ? ` Write tools (each call waits for an owner or admin to approve it): ${write.join(", ")}.`
        : "";
      return {
        text: `Approved ${tools.length} tool(s).${warning} ${describeConnection(connection)}`,
        data: { connection },
      };
    },
  }),
  defineTool({
    name: "set_mcp_connection_enabled",
    title: "Enable or disable an MCP connection",
    description:
      "Enables or disables a connection. Enabling needs a current approval, a credential when the auth kind needs one, and room under the environment's limits (8 ready connections, 64 ready tools). New tasks see the change; running tasks fail closed when they next call a changed connection.",
    access: "write",
    input: {
      ...connectionRef,
      revision,
      enabled: EnablementBody.shape.enabled.describe("true to enable, false to disable."),
    },
    output: { connection: ConnectionSchema },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    nextStep: connectionNextStep,
    async run(input, ctx) {
      const connection = await setConnectionEnabled({ ctx, input });
      return { text: describeConnection(connection), data: { connection } };
    },
  }),
  defineTool({
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
  }),
  defineTool({
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
  }),
  defineTool({
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
  }),
  defineTool({
    name: "list_task_call_approvals",
    title: "List a task's call approvals",
    description:
      "Lists the write calls a task's agent asked to make: tool, connection, revision, exact arguments and state (pending | approved | rejected | expired | used). Approving is a person's act: each pending one carries a url to open in a browser signed in to patchbay as an owner or admin, who decides there; this MCP client cannot approve.",
    access: "read",
    input: {
      environmentId,
      taskId: z.string().min(1).max(64).describe("The task's id (`tsk_…`)."),
    },
    output: { items: z.array(CallApprovalSchema) },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    nextStep: connectionNextStep,
    async run(input, ctx) {
      const page = await listCallApprovals({ ctx, input });
      const lines = page.items.map(
        (a) =>
          `- ${a.id} ${a.toolName} on ${a.connectionId} (revision ${a.connectionRevision}): ${a.state}` +
          (a.url ? `, decide at ${a.url} before ${a.expiresAt}` : ""),
      );
      return { text: [`${page.items.length} call approval(s).`, ...lines].join("\n"), data: page };
    },
  }),
];
