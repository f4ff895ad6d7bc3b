import type { Command } from "commander";
import type { Connection } from "../../features/connections/schemas.ts";
import { usageError } from "./cli-error.ts";
import { addMutationOptions, type MutationFlags, mutationHeaders, openMcpSession } from "./mcp-session.ts";
import { report } from "./mcp-write-commands.ts";
import { readSecretFromStdin } from "./stdin-secret.ts";

type CredentialFlags = MutationFlags & { stdin?: boolean };

/**
 * `credential set <id> --stdin`. The credential is read only from stdin: an argument or an
 * environment variable would sit in shell history, `ps` output and CI logs.
 */
export function registerMcpCredentialCommand(mcp: Command): void {
  const credential = mcp.command("credential").description("Write-only credential of a connection");
  addMutationOptions(
    credential
      .command("set")
      .description("Set or rotate the credential, read from stdin (checked against the server first)")
      .argument("<connection-id>", "e.g. mcp_…")
      .option("--stdin", "read the credential from stdin (required; one trailing newline is dropped)"),
  ).action(async (id: string, flags: CredentialFlags) => {
    const session = openMcpSession(flags, id);
    if (!flags.stdin) {
      throw usageError(
        "credential set reads the credential only from stdin; pass --stdin",
        `printf '%s' "$TOKEN" | patchbay environment mcp credential set ${id} --environment ${session.environmentId} --revision <n> --stdin`,
      );
    }
    const revision = session.revision(flags);
    const value = await readSecretFromStdin("credential");
    const connection = (await session.request({
      method: "PUT",
      path: session.path("/credential"),
      headers: mutationHeaders(session.idempotencyKey(flags), revision),
      body: { value },
    })) as Connection;
    report(
      session,
      connection,
      `Credential set for ${connection.id} (checked against the server; never shown again).`,
    );
  });
}
