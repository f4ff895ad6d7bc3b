import type { Command } from "commander";
import type { Environment } from "../../features/environments/schemas.ts";
import { table } from "./format.ts";
import { registerMcpCommands } from "./mcp-commands.ts";
import { addClientOptions, profilesPath, updateProfile, withProfilesLock } from "./profiles.ts";
import { registerRepositoryCommands } from "./repository-commands.ts";
import { jsonHelp, openSession, readPages, resolveEnvironment, type SessionFlags } from "./session.ts";
import { registerTaskCommands } from "./task-commands.ts";

/** `patchbay environment …`: the environments, and under each its connections, repositories and tasks. */
export function registerEnvironmentCommands(environment: Command): void {
  const list = environment
    .command("list")
    .description("List the organisation's environments (their ids are what --environment takes)")
    .option("--json", jsonHelp);
  addClientOptions(list).action(async (flags: SessionFlags) => {
    const session = openSession(flags);
    // Organisations have few environments; read them all.
    const page = await readPages<Environment>(session, "/environments", { pageSize: "200" }, true);
    const rows = page.items.map((e) => [e.id, e.name, String(e.revision)]);
    session.show(page, rows.length === 0 ? "No environments.\n" : table(["ID", "NAME", "REVISION"], rows));
  });
  const use = environment
    .command("use")
    .description("Remember an environment in the profile: environment commands then act on it by default")
    .argument("<name-or-id>", "the environment's name or UUID");
  addClientOptions(use).action(async (given: string, flags: SessionFlags) => {
    const session = openSession(flags);
    const chosen = await resolveEnvironment(session, given, "environment");
    // A UUID given as is: read its name, which also proves it is one of the organisation's.
    const env: Environment | { id: string; name: string } =
      chosen.name === undefined
        ? ((await session.request({ method: "GET", path: `/environments/${chosen.id}` })) as Environment)
        : { id: chosen.id, name: chosen.name };
    const { profile } = session.settings();
    const path = profilesPath();
    await withProfilesLock(path, async () =>
      updateProfile(path, profile, (current) => ({
        ...current,
        environment: { id: env.id, name: env.name },
      })),
    );
    session.print(`Profile ${profile} now acts on environment ${env.name} (${env.id}).\n`);
  });
  registerMcpCommands(environment);
  registerRepositoryCommands(environment);
  registerTaskCommands(environment);
}
