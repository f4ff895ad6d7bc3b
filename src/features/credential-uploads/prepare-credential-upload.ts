import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { newId, randomToken } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { credentialUploads } from "../../platform/db/schema/credential-uploads.ts";
import { assertRevision, findConnection } from "../connections/index.ts";

/** `pcu_` + 192 random bits; only the SHA-256 is stored. */
function generateUploadToken(): { token: string; hash: string } {
  const token = `pcu_${randomToken(24)}`;
  return { token, hash: hashUploadToken(token) };
}

export const hashUploadToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** The browser link; the token rides in the query, which the access log never records. */
const uploadUrl = (baseUrl: string, token: string): string =>
  `${baseUrl}/credential-uploads?token=${encodeURIComponent(token)}`;

export type UploadRow = typeof credentialUploads.$inferSelect;

/** What the MCP client sees: `in_progress` is still `pending` to it, and time expires a link. */
export type UploadStatus = "pending" | "completed" | "failed" | "expired";

const UPLOAD_TTL_MS = 10 * 60_000;

export function uploadStatus(row: UploadRow, now: Date): UploadStatus {
  if (row.state === "completed" || row.state === "failed" || row.state === "expired") return row.state;
  // An upload the owner submitted in time finishes even if it crosses the deadline.
  if (row.state === "pending" && row.expiresAt.getTime() <= now.getTime()) return "expired";
  return "pending";
}

export type PreparedUpload = {
  requestId: string;
  status: UploadStatus;
  connectionId: string;
  revision: number;
  expiresAt: string;
  /** Only when the request is made: the link is shown once. */
  url?: string;
  errorCode?: string;
};

/**
 * `prepare_mcp_connection_credential_upload` (spec 4C): without `requestId`, creates a
 * single-use browser action bound to the caller, the connection and its revision, alive ten
 * minutes, and returns its URL; with `requestId`, reports where that action stands, for the
 * same caller only. The credential is then typed by the signed-in owner in the browser and never
 * passes through the MCP client.
 */
export async function prepareCredentialUpload(args: {
  ctx: ServiceContext;
  input: {
    environmentId: string;
    connectionId: string;
    revision?: number | undefined;
    requestId?: string | undefined;
  };
}): Promise<PreparedUpload> {
  const { ctx, input } = args;
  const member = requireOwnerOrAdmin(ctx, "mcp_connections:manage");
  const now = ctx.deps.clock();
  if (input.requestId) {
    const [row] = await ctx.deps.db
      .select()
      .from(credentialUploads)
      .where(
        and(
          eq(credentialUploads.id, input.requestId),
          eq(credentialUploads.organizationId, ctx.actor.organizationId),
          eq(credentialUploads.environmentId, input.environmentId),
          eq(credentialUploads.connectionId, input.connectionId),
          eq(credentialUploads.userId, member.userId),
        ),
      );
    if (!row)
      throw new AppError("not_found", "No such credential upload request for you and this connection.");
    return {
      requestId: row.id,
      status: uploadStatus(row, now),
      connectionId: row.connectionId,
      revision: row.revision,
      expiresAt: row.expiresAt.toISOString(),
      ...(row.errorCode ? { errorCode: row.errorCode } : {}),
    };
  }
  if (input.revision === undefined) {
    throw new AppError(
      "invalid_request",
      "Send the connection's revision to prepare an upload (or a requestId to poll one).",
    );
  }
  const connection = await findConnection(ctx.deps.db, ctx, input);
  assertRevision(connection, input.revision);
  if (connection.authKind === "none") {
    throw new AppError(
      "credential_not_applicable",
      "This connection uses no authentication; change auth.kind first.",
    );
  }
  const { token, hash } = generateUploadToken();
  const id = newId("cup");
  const expiresAt = new Date(now.getTime() + UPLOAD_TTL_MS);
  await withTransaction(ctx.deps.db, async (tx) => {
    await tx.insert(credentialUploads).values({
      id,
      organizationId: connection.organizationId,
      environmentId: connection.environmentId,
      connectionId: connection.id,
      userId: member.userId,
      revision: connection.revision,
      tokenHash: hash,
      state: "pending",
      createdAt: now,
      expiresAt,
    });
    await recordAudit(tx, ctx, {
      action: "mcp_connection.credential_upload_prepared",
      targetType: "mcp_connection",
      targetId: connection.id,
      environmentId: connection.environmentId,
      details: { requestId: id, revision: connection.revision },
    });
  });
  return {
    requestId: id,
    status: "pending",
    connectionId: connection.id,
    revision: connection.revision,
    expiresAt: expiresAt.toISOString(),
    url: uploadUrl(ctx.deps.config.baseUrl, token),
  };
}
