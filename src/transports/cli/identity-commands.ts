import type { Command } from "commander";
import type { Environment } from "../../features/environments/schemas.ts";
import type { Me } from "../../features/me/schemas.ts";
import { keyValue, table } from "./format.ts";
import { jsonHelp, openSession, readPages, type SessionFlags } from "./session.ts";
import { addClientOptions } from "./settings.ts";

/** `whoami` and `environment list`: reads that need no connection context. */
export function registerIdentityCommands(program: Command, environment: Command): void {
  addClientOptions(
    program
      .command("whoami")
      .description("Show who you are to the API: user, organisation, role, permissions, credential")
      .option("--json", jsonHelp),
  ).action(async (flags: SessionFlags) => {
    const session = openSession(flags);
    const me = (await session.request({ method: "GET", path: "/me" })) as Me;
    const { baseUrl, profile } = session.settings();
    const credential =
      me.actor.type === "oauth_token"
        ? `login (OAuth grant ${me.actor.id}, client ${me.actor.clientId ?? "?"})`
        : `${me.actor.type} ${me.actor.id}`;
    session.show(
      me,
      keyValue([
        ["User", `${me.user.email} (${me.user.id})`],
        ["Organisation", `${me.organization.name} (${me.organization.id})`],
        ["Role", me.role],
        ["Permissions", me.permissions.join(", ") || "none"],
        ["Credential", credential],
        ["Base URL", baseUrl],
        ["Profile", profile],
      ]),
    );
  });

  addClientOptions(
    environment
      .command("list")
      .description("List the organisation's environments (their ids are what --environment takes)")
      .option("--json", jsonHelp),
  ).action(async (flags: SessionFlags) => {
    const session = openSession(flags);
    // Organisations have few environments; read them all.
    const page = await readPages<Environment>(session, "/environments", { pageSize: "200" }, true);
    session.show(
      page,
      page.items.length === 0
        ? "No environments.\n"
        : table(
            ["ID", "NAME", "REVISION"],
            page.items.map((e) => [e.id, e.name, String(e.revision)]),
          ),
    );
  });
}
