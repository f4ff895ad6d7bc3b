import { Command, CommanderError } from "commander";
import { ConfigError, EX_CONFIG, loadConfig } from "../config.ts";
import { version } from "../version.ts";
import { registerAdminCommands } from "./admin.ts";

export async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name("patchbay")
    .description("patchbay: observability and autonomous remediation")
    .version(version, "-V, --version")
    .exitOverride();

  program
    .command("serve")
    .description("Run the service (embedded PGlite unless DATABASE_URL is a postgres:// URL)")
    .action(async () => {
      const { runServer } = await import("../main.ts");
      await runServer(loadConfig());
    });

  registerAdminCommands(program);

  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode);
    if (error instanceof ConfigError) {
      process.stderr.write(`patchbay: invalid configuration: ${error.message}\n`);
      process.exit(EX_CONFIG);
    }
    process.stderr.write(`patchbay: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
