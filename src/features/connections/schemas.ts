import { z } from "@hono/zod-openapi";
import { singleLineText } from "../../schemas.ts";
import { EnvironmentParams } from "../environments/index.ts";

export const readinessStates = [
  "ready",
  "disabled",
  "credential_missing",
  "approval_missing",
  "approval_stale",
] as const;
export type Readiness = (typeof readinessStates)[number];

const iso = z.iso.datetime();

const access = z.enum(["read", "write"]).openapi({
  description:
    "`read`: the task agent may call the tool on its own. `write`: every call waits for an owner or admin to approve it (docs/tasks.md).",
});

export const ApprovedToolSchema = z
  .object({
    name: z.string(),
    access,
    attested: z.boolean().openapi({
      description: "An owner or admin attested that the tool only reads (its annotations do not say so).",
    }),
  })
  .openapi("McpApprovedTool");

export const HealthSchema = z
  .object({
    lastSuccessAt: iso.nullable().openapi({
      description: "When a task's call last reached the server (the tool answered, also with its own error).",
    }),
    lastFailureAt: iso.nullable().openapi({
      description: "When a task's call last failed to reach the server, timed out, or was refused by it.",
    }),
    lastFailureCode: z.string().nullable().openapi({
      description:
        "That failure's error code (`remote_auth_failed`, `remote_unreachable`, `remote_timeout`, …).",
      example: "remote_auth_failed",
    }),
    consecutiveFailures: z.number().int().min(0).openapi({ description: "Failures since the last success." }),
    credentialRejected: z.boolean().openapi({
      description:
        "The server answered 401/403 to the latest call and nothing succeeded since. Cleared by a successful call or a new credential. Readiness does not change: it is derived from configuration only.",
    }),
    credentialRejectedAt: iso.nullable(),
  })
  .strict()
  .openapi("McpConnectionHealth", {
    description: "What tasks' calls saw of the server. Not part of `readiness`.",
  });
export type Health = z.infer<typeof HealthSchema>;

export const ConnectionSchema = z
  .object({
    id: z.string().openapi({ example: "mcp_7c9e2b4d6f8h0k2m4p6r8t0v" }),
    environmentId: z.uuid(),
    alias: z.string(),
    displayName: z.string(),
    endpointOrigin: z
      .string()
      .openapi({ description: "Scheme and host only; the full endpoint URL is never returned." }),
    auth: z.object({
      kind: z.enum(["none", "bearer", "api_key"]),
      headerName: z.string().optional().openapi({ description: "Only for `api_key`." }),
      credentialReady: z.boolean().openapi({
        description: "A usable credential is attached (always true for `none`, which needs none).",
      }),
      credentialUpdatedAt: iso.nullable(),
    }),
    enabled: z.boolean(),
    readiness: z.enum(readinessStates),
    nextStep: z.string().openapi({ description: "What to do next, in words, derived from `readiness`." }),
    revision: z.number().int().min(1),
    discovery: z
      .object({ id: z.string(), discoveredAt: iso, toolCount: z.number().int(), manifestHash: z.string() })
      .nullable(),
    approval: z
      .object({
        approvedAt: iso,
        approvedBy: z.string(),
        approvedByEmail: z
          .string()
          .nullable()
          .openapi({ description: "The approver's email; null once their account is gone." }),
        toolCount: z.number().int(),
        manifestHash: z.string(),
        stale: z.boolean(),
        tools: z.array(ApprovedToolSchema),
      })
      .nullable(),
    health: HealthSchema,
    createdAt: iso,
    updatedAt: iso,
  })
  .openapi("McpConnection", {
    example: {
      id: "mcp_7c9e2b4d6f8h0k2m4p6r8t0v",
      environmentId: "0b6f2c1e-8d4a-4f3b-9c2d-1e0f9a8b7c6d",
      alias: "runbooks",
      displayName: "Runbooks",
      endpointOrigin: "https://mcp.example.com",
      auth: { kind: "bearer", credentialReady: true, credentialUpdatedAt: "2026-11-22T10:02:00.000Z" },
      enabled: true,
      readiness: "ready",
      nextStep: "Start a new task in this environment.",
      revision: 4,
      discovery: {
        id: "dsc_1b3d5f7h9k1m3p5r7t9v1x3z",
        discoveredAt: "2026-11-22T10:03:00.000Z",
        toolCount: 12,
        manifestHash: "sha256:5f1c…",
      },
      approval: {
        approvedAt: "2026-11-22T10:04:00.000Z",
        approvedBy: "usr_2a4c6e8g0j2l4n6q8s0u2w4y",
        approvedByEmail: "ops@example.com",
        toolCount: 4,
        manifestHash: "sha256:9a3e…",
        stale: false,
        tools: [{ name: "search_runbooks", access: "read", attested: false }],
      },
      health: {
        lastSuccessAt: "2026-11-22T11:00:00.000Z",
        lastFailureAt: null,
        lastFailureCode: null,
        consecutiveFailures: 0,
        credentialRejected: false,
        credentialRejectedAt: null,
      },
      createdAt: "2026-11-22T10:00:00.000Z",
      updatedAt: "2026-11-22T10:05:00.000Z",
    },
  });
export type Connection = z.infer<typeof ConnectionSchema>;

const headerName = z.string().min(1).max(64).openapi({
  example: "X-Api-Key",
  description: "An HTTP token; not hop-by-hop, framing, cookie, host, Authorization or Mcp-*.",
});

export const AuthInput = z
  .discriminatedUnion("kind", [
    z.object({ kind: z.literal("none") }).strict(),
    z.object({ kind: z.literal("bearer") }).strict(),
    z.object({ kind: z.literal("api_key"), headerName }).strict(),
  ])
  .openapi("McpConnectionAuth", {
    description: "How patchbay authenticates to the server. The credential is set separately.",
  });
export type AuthInputValue = z.infer<typeof AuthInput>;

const alias = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9_-]{0,39}$/,
    "must be 1–40 lowercase letters, digits, '-' or '_', starting with a letter or digit",
  )
  .openapi({ example: "runbooks" });
const displayName = singleLineText(100).openapi({ example: "Runbooks" });
const endpointUrl = z.string().min(1).max(2048).openapi({ example: "https://mcp.example.com/mcp" });

export const CreateConnectionBody = z
  .object({ alias, displayName, endpointUrl, auth: AuthInput })
  .strict()
  .openapi("CreateMcpConnection");

export const UpdateConnectionBody = z
  .object({
    displayName: displayName.optional(),
    endpointUrl: endpointUrl.optional(),
    auth: AuthInput.optional(),
  })
  .strict()
  .refine(
    (b) => Object.keys(b).length > 0,
    "give at least one of displayName, endpointUrl, auth (alias is immutable)",
  )
  .openapi("UpdateMcpConnection");

export const DiscoveredToolSchema = z
  .object({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()),
    outputSchema: z.record(z.string(), z.unknown()).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(),
    access: access.openapi({
      description:
        "The class its annotations give it once approved: `read` only for `readOnlyHint: true` without `destructiveHint: true`. An owner or admin may attest a `write` tool as `read` when approving.",
    }),
    hash: z.string(),
    approvable: z.boolean(),
    reason: z.string().optional(),
  })
  .openapi("DiscoveredTool");

export const DiscoverySchema = z
  .object({
    id: z.string(),
    discoveredAt: iso,
    connectionRevision: z.number().int(),
    manifestHash: z.string(),
    tools: z.array(DiscoveredToolSchema),
  })
  .openapi("McpDiscovery");
export type Discovery = z.infer<typeof DiscoverySchema>;

export const ApproveBody = z
  .object({
    discoveryId: z.string().min(1).max(64),
    toolNames: z.array(z.string().min(1).max(128)).min(1).max(1000),
    attestReadOnly: z.array(z.string().min(1).max(128)).max(1000).optional().openapi({
      description:
        "Approved tools you attest only read although their annotations do not say so: the agent may then call them on its own. Recorded in the audit trail with your name and the manifest.",
    }),
  })
  .strict()
  .openapi("ApproveMcpTools", {
    example: { discoveryId: "dsc_1b3d5f7h9k1m3p5r7t9v1x3z", toolNames: ["search_runbooks"] },
  });

export const EnablementBody = z.object({ enabled: z.boolean() }).strict().openapi("McpEnablement");

export const CredentialBody = z
  .object({
    value: z
      .string()
      .min(1)
      .max(4096)
      .regex(
        /^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/,
        "must be visible ASCII (single inner spaces allowed), as HTTP headers require",
      ),
  })
  .strict()
  .openapi("McpCredential", { description: "Write-only; never echoed, logged or shown again." });

export const DeletionPreviewSchema = z
  .object({
    receipt: z
      .string()
      .openapi({ description: "Send as `Deletion-Receipt` on DELETE; single use, bound to this revision." }),
    expiresAt: iso,
    effects: z.object({
      approvedToolCount: z.number().int(),
      credentialDestroyed: z.boolean(),
      runningTasksAffected: z.number().int(),
    }),
  })
  .openapi("McpDeletionPreview");
export type DeletionPreview = z.infer<typeof DeletionPreviewSchema>;

export const ConnectionParams = EnvironmentParams.extend({
  connectionId: z
    .string()
    .max(64)
    .openapi({ param: { name: "connectionId", in: "path" }, example: "mcp_7c9e2b4d6f8h0k2m4p6r8t0v" }),
});
