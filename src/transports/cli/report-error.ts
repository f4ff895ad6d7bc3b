import { CommanderError } from "commander";
import { ConfigError, EX_CONFIG } from "../../config-error.ts";
import { CliError, exitCodes } from "./cli-error.ts";
import { styleFor } from "./style.ts";

/**
 * Ends the process for a failed command with its documented exit code (docs/cli.md). A `CliError`
 * is reported on stderr as `error: <code>: <detail>`, then the next step and any notes.
 */
export function exitFor(error: unknown): never {
  // Help and --version exit 0; every other parse failure is a usage error.
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : exitCodes.usage);
  if (error instanceof CliError) {
    const style = styleFor(process.stderr);
    const lines = [`${style.red(style.bold("error:"))} ${error.code}: ${error.message}`];
    if (error.nextStep) lines.push(`${style.bold("next step:")} ${error.nextStep}`);
    for (const note of error.notes) lines.push(style.dim(note));
    process.stderr.write(`${lines.join("\n")}\n`);
    process.exit(error.exitCode);
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`patchbay: invalid configuration: ${error.message}\n`);
    process.exit(EX_CONFIG);
  }
  process.stderr.write(`patchbay: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
