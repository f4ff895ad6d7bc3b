import type { CliError } from "./cli-error.ts";
import type { Style } from "./style.ts";

/** `error: <code>: <detail>`, then the next step and any notes; each on its own line, for stderr. */
export function formatCliError(error: CliError, style: Style): string {
  const lines = [`${style.red(style.bold("error:"))} ${error.code}: ${error.message}`];
  if (error.nextStep) lines.push(`${style.bold("next step:")} ${error.nextStep}`);
  for (const note of error.notes) lines.push(style.dim(note));
  return `${lines.join("\n")}\n`;
}
