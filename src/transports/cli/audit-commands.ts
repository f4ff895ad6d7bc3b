import type { Command } from "commander";
import type { AuditEvent } from "../../features/audit/schemas.ts";
import type { Me } from "../../features/me/schemas.ts";
import { usageError } from "./cli-error.ts";
import { table, truncate } from "./format.ts";
import { addClientOptions } from "./profiles.ts";
import { jsonHelp, openSession, readPages, type SessionFlags } from "./session.ts";

type AuditFlags = SessionFlags & {
  actor?: string;
  action?: string;
  target?: string;
  channel?: string;
  from?: string;
  to?: string;
  pageSize?: string;
  cursor?: string;
  all?: boolean;
};

/** Who acted, for a person: the email when there is one, else the credential's id. */
const who = (e: AuditEvent): string =>
  e.actor.email ?? (e.actor.userId ? e.actor.userId : `${e.actor.type}:${e.actor.id}`);

/** A few detail fields that tell what changed, in one cell. */
function summary(e: AuditEvent): string {
  const parts = Object.entries(e.details)
    .filter(([key]) => key !== "environmentId")
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  return truncate(parts.join(" "), 60);
}

/** `patchbay audit list`: the organisation's audit trail (owners and admins). */
export function registerAuditCommands(audit: Command): void {
  const list = audit
    .command("list")
    .description("List audit events, newest first: who changed what, when, through which door")
    .option("--environment <uuid>", "only events of this environment")
    .option("--actor <who>", "only events by this member (email or usr_…) or credential (key_…, oag_…)")
    .option("--action <action>", "only this action, e.g. mcp_connection.enabled")
    .option("--target <id>", "only events about this id (a connection, key, task…)")
    .option("--channel <door>", "only events through this door: rest, cli, mcp, web, x402, system")
    .option("--from <time>", "events at or after this ISO 8601 instant")
    .option("--to <time>", "events before this ISO 8601 instant")
    .option("--page-size <n>", "events per page, 1–200 (server default 50)")
    .option("--cursor <cursor>", "continue from a previous page's nextCursor")
    .option("--all", "follow nextCursor until the last page")
    .option("--json", jsonHelp);
  addClientOptions(list).action(async (flags: AuditFlags) => {
    const raw = flags.pageSize;
    if (raw !== undefined && (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 200)) {
      throw usageError(`--page-size must be 1–200 (got "${raw}")`);
    }
    if (flags.all && flags.cursor !== undefined)
      throw usageError("--all starts at the first page; drop --cursor");
    const session = openSession(flags);
    const me = (await session.request({ method: "GET", path: "/me" })) as Me;
    const query = {
      pageSize: raw === undefined ? undefined : String(Number(raw)),
      cursor: flags.cursor,
      environmentId: flags.environment,
      actor: flags.actor,
      action: flags.action,
      target: flags.target,
      channel: flags.channel,
      from: flags.from,
      to: flags.to,
    };
    const page = await readPages<AuditEvent>(
      session,
      `/organizations/${encodeURIComponent(me.organization.id)}/audit-events`,
      query,
      flags.all,
    );
    const rows = page.items.map((e) => [
      e.occurredAt,
      e.action,
      who(e),
      e.channel,
      `${e.target.type} ${e.target.id}`,
      summary(e),
    ]);
    session.show(
      page,
      rows.length === 0
        ? "No audit events match.\n"
        : table(["TIME", "ACTION", "ACTOR", "DOOR", "TARGET", "DETAILS"], rows),
    );
    if (!session.json && page.nextCursor !== null) {
      session.info(`more events: --cursor ${page.nextCursor} (or --all)`);
    }
  });
}
