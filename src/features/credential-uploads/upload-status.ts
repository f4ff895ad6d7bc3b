import type { credentialUploads } from "../../platform/db/schema/credential-uploads.ts";

export type UploadRow = typeof credentialUploads.$inferSelect;

/** What the MCP client sees: `in_progress` is still `pending` to it, and time expires a link. */
export type UploadStatus = "pending" | "completed" | "failed" | "expired";

export const UPLOAD_TTL_MS = 10 * 60_000;

export function uploadStatus(row: UploadRow, now: Date): UploadStatus {
  if (row.state === "completed" || row.state === "failed" || row.state === "expired") return row.state;
  // An upload the owner submitted in time finishes even if it crosses the deadline.
  if (row.state === "pending" && row.expiresAt.getTime() <= now.getTime()) return "expired";
  return "pending";
}
