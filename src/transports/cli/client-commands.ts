import type { Command } from "commander";
import { registerIdentityCommands } from "./identity-commands.ts";
import { registerLoginCommands } from "./login-commands.ts";
import { registerMcpCredentialCommand } from "./mcp-credential-command.ts";
import { registerMcpDeleteCommand } from "./mcp-delete-command.ts";
import { registerMcpDiscoverCommands } from "./mcp-discover-commands.ts";
import { registerMcpReadCommands } from "./mcp-read-commands.ts";
import { registerMcpWriteCommands } from "./mcp-write-commands.ts";
import { registerProfileCommands } from "./profile-commands.ts";
import { registerRepositoryCommands } from "./repository-commands.ts";

/** The REST client commands (docs/cli.md). They load nothing of the server, so they start fast. */
export function registerClientCommands(program: Command): void {
  const environment = program
    .command("environment")
    .description("Environments, their MCP connections and repositories");
  registerLoginCommands(program);
  registerIdentityCommands(program, environment);
  registerProfileCommands(program);

  const mcp = environment
    .command("mcp")
    .description(
      "Customer MCP server connections of one environment (--environment <uuid> on every command)",
    );
  registerMcpReadCommands(mcp);
  registerMcpWriteCommands(mcp);
  registerMcpDiscoverCommands(mcp);
  registerMcpCredentialCommand(mcp);
  registerMcpDeleteCommand(mcp);
  registerRepositoryCommands(environment);
}
