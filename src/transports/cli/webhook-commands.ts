import type { Command } from "commander";
import { webhookEventTypes } from "../../features/webhooks/event-types.ts";
import type { WebhookDelivery, WebhookEndpoint } from "../../features/webhooks/schemas.ts";
import { webhookDeliveryStatuses } from "../../platform/db/schema/webhooks.ts";
import { usageError } from "./cli-error.ts";
import { keyValue, type Style, table, truncate, yesNo } from "./format.ts";
import { addClientOptions } from "./profiles.ts";
import { collect, jsonHelp, openSession, type Page, readPages, type SessionFlags } from "./session.ts";

type Session = ReturnType<typeof openSession>;
type Flags = SessionFlags & {
  url?: string;
  event?: string[];
  description?: string;
  status?: string;
  pageSize?: string;
  cursor?: string;
};

/** The caller's organisation: webhook endpoints live under it (`/organizations/{id}/…`). */
async function basePath(session: Session): Promise<string> {
  const me = (await session.request({ method: "GET", path: "/me" })) as { organization: { id: string } };
  return `/organizations/${me.organization.id}/webhook-endpoints`;
}

function command(
  parent: Command,
  spec: { name: string; args?: string; description: string; options?: [string, string, typeof collect?][] },
  run: (session: Session, flags: Flags, args: string[]) => Promise<void>,
): void {
  const cmd = parent
    .command(`${spec.name}${spec.args ? ` ${spec.args}` : ""}`)
    .description(spec.description)
    .option("--json", jsonHelp);
  for (const [flags, description, parse] of spec.options ?? []) {
    if (parse) cmd.option(flags, description, parse);
    else cmd.option(flags, description);
  }
  addClientOptions(cmd).action(async (...received: unknown[]) => {
    // commander passes the positional arguments, then the options, then the command.
    const positional = received.slice(0, -2) as string[];
    const flags = received.at(-2) as Flags;
    await run(openSession(flags), flags, positional);
  });
}

/** `patchbay webhook …` (docs/webhooks.md): the organisation's webhook endpoints and their deliveries. */
export function registerWebhookCommands(webhook: Command): void {
  const eventOption: [string, string, typeof collect] = [
    "--event <type>",
    `an event type to send (repeat): ${webhookEventTypes.join(", ")}`,
    collect,
  ];

  command(webhook, { name: "list", description: "List the webhook endpoints" }, async (session) => {
    const page = await readPages<WebhookEndpoint>(
      session,
      await basePath(session),
      { pageSize: "200" },
      true,
    );
    session.show(page, endpointTable(page.items, session.style));
  });

  command(
    webhook,
    { name: "get", args: "<endpoint-id>", description: "Show one webhook endpoint" },
    async (session, _flags, [id]) => {
      const endpoint = (await session.request({
        method: "GET",
        path: `${await basePath(session)}/${id}`,
      })) as WebhookEndpoint;
      session.show(endpoint, endpointBlock(endpoint, session.style));
    },
  );

  command(
    webhook,
    {
      name: "create",
      description: "Create an endpoint; its signing secret is printed once",
      options: [
        ["--url <url>", "the receiver: public https:// (required)"],
        eventOption,
        ["--description <text>", "what it is for"],
      ],
    },
    async (session, flags) => {
      if (!flags.url) throw usageError("--url is required");
      if (!flags.event?.length) throw usageError("give at least one --event <type>");
      const body = {
        url: flags.url,
        eventTypes: flags.event,
        ...(flags.description ? { description: flags.description } : {}),
      };
      const created = (await session.request({ method: "POST", path: await basePath(session), body })) as {
        endpoint: WebhookEndpoint;
        secret: string;
      };
      session.show(created, secretText(`Created ${created.endpoint.id}.`, created.secret, session.style));
    },
  );

  command(
    webhook,
    {
      name: "update",
      args: "<endpoint-id>",
      description: "Change an endpoint's URL, event types or description",
      options: [
        ["--url <url>", "new receiver URL"],
        eventOption,
        ["--description <text>", "new description"],
      ],
    },
    async (session, flags, [id]) => {
      const body = {
        ...(flags.url !== undefined ? { url: flags.url } : {}),
        ...(flags.event?.length ? { eventTypes: flags.event } : {}),
        ...(flags.description !== undefined ? { description: flags.description } : {}),
      };
      if (Object.keys(body).length === 0)
        throw usageError("nothing to update: give --url, --event or --description");
      const endpoint = (await session.request({
        method: "PATCH",
        path: `${await basePath(session)}/${id}`,
        body,
      })) as WebhookEndpoint;
      session.show(endpoint, `Updated ${endpoint.id}.\n`);
    },
  );

  for (const enabled of [true, false]) {
    command(
      webhook,
      {
        name: enabled ? "enable" : "disable",
        args: "<endpoint-id>",
        description: enabled
          ? "Enable an endpoint (also one patchbay disabled after failures: its count starts over)"
          : "Disable an endpoint: new events are not sent to it",
      },
      async (session, _flags, [id]) => {
        const endpoint = (await session.request({
          method: "PATCH",
          path: `${await basePath(session)}/${id}`,
          body: { enabled },
        })) as WebhookEndpoint;
        session.show(endpoint, `${enabled ? "Enabled" : "Disabled"} ${endpoint.id}.\n`);
      },
    );
  }

  command(
    webhook,
    {
      name: "delete",
      args: "<endpoint-id>",
      description: "Delete an endpoint with its secret and delivery log",
    },
    async (session, _flags, [id]) => {
      await session.request({ method: "DELETE", path: `${await basePath(session)}/${id}` });
      session.show({ deleted: id }, `Deleted ${id}.\n`);
    },
  );

  command(
    webhook,
    {
      name: "rotate-secret",
      args: "<endpoint-id>",
      description: "Replace the signing secret; the new one is printed once",
    },
    async (session, _flags, [id]) => {
      const rotated = (await session.request({
        method: "POST",
        path: `${await basePath(session)}/${id}/secret-rotations`,
      })) as { endpoint: WebhookEndpoint; secret: string };
      session.show(
        rotated,
        secretText(
          `Rotated the secret of ${rotated.endpoint.id}; the old one no longer signs.`,
          rotated.secret,
          session.style,
        ),
      );
    },
  );

  command(
    webhook,
    {
      name: "deliveries",
      args: "<endpoint-id>",
      description: "The endpoint's delivery log, newest first, with the latest answer of each",
      options: [
        ["--status <status>", webhookDeliveryStatuses.join(" | ")],
        ["--page-size <n>", "deliveries per page (1–200, default 20)"],
        ["--cursor <cursor>", "nextCursor of the previous page"],
      ],
    },
    async (session, flags, [id]) => {
      const page = (await session.request({
        method: "GET",
        path: `${await basePath(session)}/${id}/deliveries`,
        query: { status: flags.status, pageSize: flags.pageSize ?? "20", cursor: flags.cursor },
      })) as Page<WebhookDelivery>;
      session.show(page, deliveryTable(page, session.style));
    },
  );

  command(
    webhook,
    {
      name: "redeliver",
      args: "<endpoint-id> <delivery-id>",
      description: "Send a delivery's message again (same webhook-id) as a new delivery",
    },
    async (session, _flags, [id, deliveryId]) => {
      const delivery = (await session.request({
        method: "POST",
        path: `${await basePath(session)}/${id}/deliveries/${deliveryId}/redeliveries`,
      })) as WebhookDelivery;
      session.show(
        delivery,
        `Queued ${delivery.id} (redelivers ${deliveryId}, webhook-id ${delivery.messageId}).\n`,
      );
    },
  );
}

function secretText(head: string, secret: string, style: Style): string {
  return `${head}\nSigning secret (shown once; store it now):\n  ${secret}\n${style.dim("Verify deliveries with any Standard Webhooks library (docs/webhooks.md).")}\n`;
}

function endpointState(e: WebhookEndpoint, style: Style): string {
  if (e.enabled) return style.green("enabled");
  return e.disabledReason === "failing" ? style.yellow("disabled (failing)") : style.dim("disabled");
}

function endpointTable(items: WebhookEndpoint[], style: Style): string {
  if (items.length === 0) return "No webhook endpoints.\n";
  return table(
    ["ID", "URL", "EVENTS", "STATE", "FAILED IN A ROW"],
    items.map((e) => [
      e.id,
      truncate(e.url, 50),
      e.eventTypes.join(","),
      endpointState(e, style),
      String(e.failedDeliveriesInRow),
    ]),
  );
}

function endpointBlock(e: WebhookEndpoint, style: Style): string {
  return keyValue([
    ["ID", e.id],
    ["URL", e.url],
    ["Description", e.description || "-"],
    ["Events", e.eventTypes.join(", ")],
    ["State", endpointState(e, style)],
    ["Enabled", yesNo(e.enabled)],
    ["Failed in a row", String(e.failedDeliveriesInRow)],
    ["Last success", e.lastSuccessAt ?? "never"],
    ["Last failure", e.lastFailureAt ?? "never"],
    ["Secret rotated", e.secretRotatedAt ?? "never"],
    ["Created", e.createdAt],
  ]);
}

function deliveryTable(page: Page<WebhookDelivery>, style: Style): string {
  if (page.items.length === 0) return "No deliveries.\n";
  const rows = page.items.map((d) => {
    const last = d.lastAttempts[0];
    const answer = last
      ? `${last.responseStatus ?? last.errorCode ?? "?"} in ${last.durationMs} ms${last.responseBodyExcerpt ? `: ${truncate(last.responseBodyExcerpt.replace(/\s+/g, " "), 40)}` : ""}`
      : "-";
    const status =
      d.status === "succeeded"
        ? style.green(d.status)
        : d.status === "failed"
          ? style.yellow(d.status)
          : d.status;
    return [d.id, d.eventType, status, String(d.attempts), answer, d.createdAt];
  });
  const more = page.nextCursor ? `${style.dim(`more: --cursor ${page.nextCursor}`)}\n` : "";
  return `${table(["ID", "EVENT", "STATUS", "ATTEMPTS", "LAST ANSWER", "CREATED"], rows)}${more}`;
}
