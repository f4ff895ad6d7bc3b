import type { Command } from "commander";
import type { Environment } from "../../features/environments/schemas.ts";
import type { Me } from "../../features/me/schemas.ts";
import { ApiError, type ApiRequest, createApiClient } from "./api-client.ts";
import { problemToCliError } from "./api-errors.ts";
import { json, keyValue, table } from "./format.ts";
import { addClientOptions, type ClientFlags, resolveSettings } from "./settings.ts";

type Flags = ClientFlags & { json?: boolean };

/** `whoami` and `environment list`: reads that need no connection context. */
export function registerIdentityCommands(program: Command, environment: Command): void {
  addClientOptions(
    program
      .command("whoami")
      .description("Show who you are to the API: user, organisation, role, permissions, credential")
      .option("--json", "print the API's JSON instead of text"),
  ).action(async (flags: Flags) => {
    const settings = resolveSettings(flags);
    const me = (await get(flags, { method: "GET", path: "/me" })) as Me;
    if (flags.json) return void process.stdout.write(json(me));
    process.stdout.write(
      keyValue([
        ["User", `${me.user.email} (${me.user.id})`],
        ["Organisation", `${me.organization.name} (${me.organization.id})`],
        ["Role", me.role],
        ["Permissions", me.permissions.join(", ") || "none"],
        [
          "Credential",
          me.actor.type === "oauth_token"
            ? `login (OAuth grant ${me.actor.id}, client ${me.actor.clientId ?? "?"})`
            : `${me.actor.type} ${me.actor.id}`,
        ],
        ["Base URL", settings.baseUrl],
        ["Profile", settings.profile],
      ]),
    );
  });

  addClientOptions(
    environment
      .command("list")
      .description("List the organisation's environments (their ids are what --environment takes)")
      .option("--json", "print the API's JSON instead of text"),
  ).action(async (flags: Flags) => {
    type Page = { items: Environment[]; nextCursor: string | null };
    const items: Environment[] = [];
    let cursor: string | undefined;
    // Organisations have few environments; read them all.
    for (let n = 0; n < 100; n++) {
      const page = (await get(flags, {
        method: "GET",
        path: "/environments",
        query: { pageSize: "200", cursor },
      })) as Page;
      items.push(...page.items);
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    if (flags.json) return void process.stdout.write(json({ items, nextCursor: null }));
    process.stdout.write(
      items.length === 0
        ? "No environments.\n"
        : table(
            ["ID", "NAME", "REVISION"],
            items.map((e) => [e.id, e.name, String(e.revision)]),
          ),
    );
  });
}

async function get(flags: Flags, request: ApiRequest): Promise<unknown> {
  try {
    return (await createApiClient(resolveSettings(flags)).request(request)).body;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (flags.json) process.stdout.write(json(error.problem));
    throw problemToCliError(error.problem, {});
  }
}
