import type { z } from "@hono/zod-openapi";
import type { Connection, DeletionPreviewSchema, Discovery } from "../../features/connections/schemas.ts";
import { keyValue, table, truncate, yesNo } from "./format.ts";
import type { Style } from "./style.ts";

export type DeletionPreview = z.infer<typeof DeletionPreviewSchema>;

function readinessText(readiness: Connection["readiness"], style: Style): string {
  if (readiness === "ready") return style.green(readiness);
  if (readiness === "disabled") return style.dim(readiness);
  return style.yellow(readiness);
}

export function connectionTable(items: Connection[], style: Style): string {
  if (items.length === 0) return "No MCP connections in this environment.\n";
  return table(
    ["ID", "ALIAS", "READINESS", "ENABLED", "REVISION", "NEXT STEP"],
    items.map((c) => [
      c.id,
      c.alias,
      readinessText(c.readiness, style),
      yesNo(c.enabled),
      String(c.revision),
      c.readiness === "ready" ? "" : c.nextStep,
    ]),
  );
}

/** The command that takes the connection's next step, when one command does. */
function nextCommand(c: Connection): string | undefined {
  const tail = `${c.id} --environment ${c.environmentId} --revision ${c.revision}`;
  switch (c.readiness) {
    case "credential_missing":
      return `patchbay environment mcp credential set ${tail} --stdin`;
    case "approval_missing":
    case "approval_stale":
      return `patchbay environment mcp discover ${tail}`;
    case "disabled":
      return `patchbay environment mcp enable ${tail}`;
    default:
      return undefined;
  }
}

export function connectionBlock(c: Connection, style: Style): string {
  const auth = c.auth.kind === "api_key" ? `api_key (header ${c.auth.headerName ?? "?"})` : c.auth.kind;
  const credential =
    c.auth.kind === "none"
      ? "not needed"
      : c.auth.credentialReady
        ? `set${c.auth.credentialUpdatedAt ? ` ${c.auth.credentialUpdatedAt}` : ""}`
        : style.yellow("missing");
  const command = nextCommand(c);
  const next =
    c.readiness === "ready" ? c.nextStep : `${c.nextStep}${command ? `\n${style.dim(command)}` : ""}`;
  const discovery = c.discovery
    ? `${c.discovery.id} (${c.discovery.toolCount} tools, ${c.discovery.discoveredAt})`
    : "none";
  const approval = c.approval
    ? `${c.approval.toolCount} tools, ${c.approval.approvedAt} by ${c.approval.approvedBy}${c.approval.stale ? style.yellow(" (stale)") : ""}`
    : "none";
  return keyValue([
    ["ID", c.id],
    ["Alias", c.alias],
    ["Display name", c.displayName],
    ["Environment", c.environmentId],
    ["Endpoint", c.endpointOrigin],
    ["Auth", auth],
    ["Credential", credential],
    ["Enabled", yesNo(c.enabled)],
    ["Readiness", readinessText(c.readiness, style)],
    ["Next step", next],
    ["Revision", String(c.revision)],
    ["Discovery", discovery],
    ["Approval", approval],
    ["Created", c.createdAt],
    ["Updated", c.updatedAt],
  ]);
}

export function discoveryText(d: Discovery, style: Style): string {
  const approvable = d.tools.filter((t) => t.approvable).length;
  const head = keyValue([
    ["Discovery", d.id],
    ["Discovered", d.discoveredAt],
    ["Manifest", d.manifestHash],
    ["Tools", `${d.tools.length} (${approvable} approvable)`],
  ]);
  if (d.tools.length === 0) return head;
  const rows = d.tools.map((t) => [
    t.name,
    t.approvable ? style.green("yes") : style.yellow("no"),
    truncate(t.approvable ? (t.description ?? t.title ?? "") : `not approvable: ${t.reason ?? "?"}`, 70),
  ]);
  return `${head}\n${table(["TOOL", "APPROVABLE", "DESCRIPTION"], rows)}`;
}

export function previewText(p: DeletionPreview): string {
  const e = p.effects;
  return keyValue([
    ["Approved tools removed", String(e.approvedToolCount)],
    ["Credential destroyed", yesNo(e.credentialDestroyed)],
    ["Running tasks affected", String(e.runningTasksAffected)],
    ["Receipt expires", p.expiresAt],
  ]);
}
