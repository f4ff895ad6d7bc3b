import { Command } from "commander";
import { version } from "../../version.ts";
import { exitFor } from "./cli-error.ts";
import { addHelpExamples } from "./help-examples.ts";
import { registerLoginCommands, registerProfileCommands, registerWhoamiCommand } from "./login-commands.ts";

export async function main(argv: string[]): Promise<void> {
  const program = await buildProgram(argv);
  await program.parseAsync(argv).catch(exitFor);
}

type Register = (group: Command) => void;

/**
 * The command groups whose subcommands live in modules of their own (chunks of the bundle), loaded
 * only when the command line names the group: `patchbay --help`, `--version` and the top-level
 * commands load none of them. The admin group loads the database layer (seconds of start-up).
 */
const groups: Record<string, { description: string; load: () => Promise<Register> }> = {
  admin: {
    description: "Operator commands against the configured database",
    load: async () => (await import("./admin.ts")).registerAdminCommands,
  },
  environment: {
    description: "Environments, their MCP connections, repositories and tasks",
    load: async () => (await import("./environment-commands.ts")).registerEnvironmentCommands,
  },
  webhook: {
    description: "Webhook endpoints of the organisation (Standard Webhooks), their deliveries and secrets",
    load: async () => (await import("./webhook-commands.ts")).registerWebhookCommands,
  },
  audit: {
    description: "The organisation's audit trail (owners and admins)",
    load: async () => (await import("./audit-commands.ts")).registerAuditCommands,
  },
};

/** Every command, declared; `argv` decides which groups' subcommands are loaded. */
export function buildProgram(argv: string[]): Promise<Command> {
  const first = argv.slice(2).find((arg) => !arg.startsWith("-"));
  // `help <group>` may name any group; loading them all keeps that simple and it is rare.
  return build((name) => first === name || first === "help");
}

/** The whole command tree, every group loaded: for tests and tools that walk it. */
export function buildCompleteProgram(): Promise<Command> {
  return build(() => true);
}

async function build(loads: (group: string) => boolean): Promise<Command> {
  const program = new Command()
    .name("patchbay")
    .description("patchbay: observability and autonomous remediation")
    .version(version, "-V, --version")
    .exitOverride();

  program
    .command("serve")
    .description("Run the service (embedded PGlite unless DATABASE_URL is a postgres:// URL)")
    .action(async () => {
      const [{ loadConfig }, { prepareToServe }] = await Promise.all([
        import("../../config.ts"),
        import("../../serve-early.ts"),
      ]);
      const config = loadConfig();
      // The embedded database starts before the server's code loads (serve-early.ts).
      const opening = prepareToServe(config);
      const { runServer } = await import("../../main.ts");
      await runServer(config, opening);
    });

  const group = async (name: string) => {
    const { description, load } = groups[name] as (typeof groups)[string];
    const command = program.command(name).description(description);
    if (loads(name)) (await load())(command);
  };
  await group("admin");
  await group("environment");
  registerLoginCommands(program);
  registerWhoamiCommand(program);
  registerProfileCommands(program);
  await group("webhook");
  await group("audit");
  addHelpExamples(program);
  return program;
}
