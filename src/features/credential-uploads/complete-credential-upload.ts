import { and, eq, gt } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError, isAppError } from "../../errors.ts";
import { credentialUploads } from "../../platform/db/schema/credential-uploads.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { setConnectionCredential } from "../connections/index.ts";
import type { WebUser } from "../web-sessions/index.ts";
import { resolveWebActor } from "../web-sessions/index.ts";
import { hashUploadToken, type UploadRow, uploadStatus } from "./prepare-credential-upload.ts";

export type OpenUpload = {
  row: UploadRow;
  connection: { alias: string; displayName: string; authKind: string; headerName: string | null };
};

/**
 * What the upload page shows, after the same checks the submission makes: the link exists, it
 * is this user's, it is still pending, and the user may still manage the connection.
 */
export async function openCredentialUpload(args: {
  ctx: ServiceContext<WebUser>;
  input: { token: string };
}): Promise<OpenUpload> {
  const { deps, actor } = args.ctx;
  const row = await usableUpload(deps, actor, args.input.token);
  const [connection] = await deps.db
    .select({
      alias: mcpConnections.alias,
      displayName: mcpConnections.displayName,
      authKind: mcpConnections.authKind,
      headerName: mcpConnections.authHeaderName,
    })
    .from(mcpConnections)
    .where(eq(mcpConnections.id, row.connectionId));
  if (!connection) throw new AppError("not_found", "The connection of this link no longer exists.");
  return { row, connection };
}

/**
 * The owner submits the credential: it goes through the very verb REST's credential set uses
 * (tried against the remote server, sealed in the vault, revision bumped), under the owner's
 * web actor. The link is claimed first, so it is used at most once even when submitted twice;
 * any refusal (another revision, a rejected credential) ends it as `failed` with the code.
 */
export async function completeCredentialUpload(args: {
  ctx: ServiceContext<WebUser>;
  input: { token: string; value: string };
}): Promise<{ organizationId: string; environmentId: string; connectionId: string }> {
  const { deps, actor: user, requestId } = args.ctx;
  const row = await usableUpload(deps, user, args.input.token);
  const now = deps.clock();
  const [claimed] = await deps.db
    .update(credentialUploads)
    .set({ state: "in_progress" })
    .where(
      and(
        eq(credentialUploads.id, row.id),
        eq(credentialUploads.state, "pending"),
        gt(credentialUploads.expiresAt, now),
      ),
    )
    .returning({ id: credentialUploads.id });
  if (!claimed) throw used();
  const finish = (state: "completed" | "failed", errorCode: string | null = null) =>
    deps.db
      .update(credentialUploads)
      .set({ state, errorCode, completedAt: deps.clock() })
      .where(eq(credentialUploads.id, row.id));
  try {
    const member = await resolveWebActor(deps.db, user, row.organizationId);
    if (!member) throw new AppError("forbidden", "You are no longer a member of this organisation.");
    await setConnectionCredential({
      ctx: { deps, actor: member.actor, channel: "web", requestId },
      input: {
        environmentId: row.environmentId,
        connectionId: row.connectionId,
        revision: row.revision,
        value: args.input.value,
      },
    });
  } catch (error) {
    await finish("failed", isAppError(error) ? error.code : "internal");
    throw error;
  }
  await finish("completed");
  return {
    organizationId: row.organizationId,
    environmentId: row.environmentId,
    connectionId: row.connectionId,
  };
}

async function usableUpload(deps: Deps, user: WebUser, token: string): Promise<UploadRow> {
  const [row] = await deps.db
    .select()
    .from(credentialUploads)
    .where(eq(credentialUploads.tokenHash, hashUploadToken(token)));
  if (!row) throw new AppError("not_found", "This credential upload link is not valid.");
  if (row.userId !== user.userId) {
    throw new AppError(
      "forbidden",
      "This link was prepared for another user; ask them to open it, or prepare your own.",
    );
  }
  const status = uploadStatus(row, deps.clock());
  if (status === "expired") {
    throw new AppError(
      "upload_expired",
      "This link has expired (links live ten minutes); prepare a new one.",
    );
  }
  if (status !== "pending" || row.state !== "pending") throw used();
  return row;
}

const used = () =>
  new AppError(
    "upload_used",
    "This link has already been used; prepare a new one to set the credential again.",
  );
