import type { Command } from "commander";

const env = "--environment $ENV";

/**
 * Examples at the end of every command's `--help`, as gh shows them: one place, keyed by the
 * command's path, so help-examples.test.ts can hold every command to having some. `$ENV` is an
 * environment's id (`patchbay environment list`).
 */
export const helpExamples: Record<string, readonly string[]> = {
  serve: ["patchbay serve", "PORT=9000 PATCHBAY_DATA_DIR=./data patchbay serve"],
  "admin bootstrap": [
    "patchbay admin bootstrap",
    "patchbay admin bootstrap --org-name Acme --email ops@acme.example --json",
  ],
  "admin set-password": ["printf '%s' \"$PASSWORD\" | patchbay admin set-password --email ops@acme.example"],
  "admin rotate-kek": ["patchbay admin rotate-kek --print-new-keyring", "patchbay admin rotate-kek --json"],
  login: ["patchbay login", "patchbay login --base-url https://patchbay.example.com --profile prod"],
  logout: ["patchbay logout", "patchbay logout --profile prod --forget"],
  whoami: ["patchbay whoami", "patchbay whoami --profile prod --json"],
  "profile set": [
    "patchbay profile set --profile ci --base-url https://patchbay.example.com",
    "printf '%s' \"$PATCHBAY_API_KEY\" | patchbay profile set --profile ci --api-key-stdin",
  ],
  "profile list": ["patchbay profile list", "patchbay profile list --json"],
  "profile remove": ["patchbay profile remove ci"],
  "environment use": [
    "patchbay environment use production",
    "patchbay environment use staging --profile prod",
  ],
  "environment list": [
    "patchbay environment list",
    "ENV=$(patchbay environment list --json | jq -r '.items[0].id')",
  ],
  "environment mcp list": [
    `patchbay environment mcp list ${env}`,
    `patchbay environment mcp list ${env} --all --json`,
  ],
  "environment mcp get": [`patchbay environment mcp get mcp_3j5k7m9p ${env}`],
  "environment mcp create": [
    `patchbay environment mcp create ${env} --alias runbooks --endpoint-url https://mcp.example.com/mcp --auth bearer`,
    `patchbay environment mcp create ${env} --alias kb --endpoint-url https://kb.example.com/mcp --auth api_key --header-name X-Api-Key`,
  ],
  "environment mcp update": [
    `patchbay environment mcp update mcp_3j5k7m9p ${env} --revision 4 --display-name "Runbooks (prod)"`,
  ],
  "environment mcp enable": [`patchbay environment mcp enable mcp_3j5k7m9p ${env} --revision 3`],
  "environment mcp disable": [`patchbay environment mcp disable mcp_3j5k7m9p ${env} --revision 4`],
  "environment mcp discover": [`patchbay environment mcp discover mcp_3j5k7m9p ${env} --revision 2`],
  "environment mcp approve": [
    `patchbay environment mcp approve mcp_3j5k7m9p ${env} --revision 2 --discovery dsc_1b3d5f7h --tool search --tool lookup`,
    `patchbay environment mcp approve mcp_3j5k7m9p ${env} --revision 2 --all-approvable`,
  ],
  "environment mcp credential set": [
    `printf '%s' "$TOKEN" | patchbay environment mcp credential set mcp_3j5k7m9p ${env} --revision 1 --stdin`,
  ],
  "environment mcp delete": [
    `patchbay environment mcp disable mcp_3j5k7m9p ${env} --revision 4`,
    `patchbay environment mcp delete mcp_3j5k7m9p ${env} --revision 5 --yes`,
  ],
  "environment repository list": [`patchbay environment repository list ${env}`],
  "environment repository get": [`patchbay environment repository get rep_2a4c6e8g ${env} --json`],
  "environment repository create": [
    `patchbay environment repository create ${env} --provider local-git --path /srv/checkout --test-command "npm test" --service checkout`,
    `patchbay environment repository create ${env} --provider github --installation-id 123 --full-name acme/shop --test-command "npm test" --service shop`,
  ],
  "environment repository delete": [`patchbay environment repository delete rep_2a4c6e8g ${env} --yes`],
  "environment task list": [
    `patchbay environment task list ${env}`,
    `patchbay environment task list ${env} --all --json`,
  ],
  "environment task get": [`patchbay environment task get tsk_5y0qj1h8 ${env}`],
  "environment task call-approvals": [`patchbay environment task call-approvals tsk_5y0qj1h8 ${env}`],
  "environment task approve-call": [
    `patchbay environment task approve-call tsk_5y0qj1h8 ${env} --approval cap_7c9e2b4d`,
  ],
  "environment task reject-call": [
    `patchbay environment task reject-call tsk_5y0qj1h8 ${env} --approval cap_7c9e2b4d`,
  ],
  "audit list": [
    "patchbay audit list",
    "patchbay audit list --action mcp_connection.credential_rotated --from 2026-11-01T00:00:00Z",
    "patchbay audit list --actor ops@example.com --channel cli --json",
    `patchbay audit list ${env} --target mcp_3j5k7m9p --all`,
  ],
  "webhook list": ["patchbay webhook list", "patchbay webhook list --json"],
  "webhook get": ["patchbay webhook get whe_4k6m8p0r"],
  "webhook create": [
    "patchbay webhook create --url https://hooks.example.com/patchbay --event remediation.failed",
    "patchbay webhook create --url https://hooks.example.com/patchbay --event problem.new --event problem.regressed --description on-call",
  ],
  "webhook update": [
    "patchbay webhook update whe_4k6m8p0r --event pull_request.awaiting_review --event remediation.failed",
    "patchbay webhook update whe_4k6m8p0r --url https://hooks.example.com/v2",
  ],
  "webhook enable": ["patchbay webhook enable whe_4k6m8p0r"],
  "webhook disable": ["patchbay webhook disable whe_4k6m8p0r"],
  "webhook delete": ["patchbay webhook delete whe_4k6m8p0r"],
  "webhook rotate-secret": ["patchbay webhook rotate-secret whe_4k6m8p0r"],
  "webhook deliveries": [
    "patchbay webhook deliveries whe_4k6m8p0r",
    "patchbay webhook deliveries whe_4k6m8p0r --status failed --json",
  ],
  "webhook redeliver": ["patchbay webhook redeliver whe_4k6m8p0r whd_2b4d6f8h"],
};

/** Each leaf command's space-separated path (`environment mcp list`) and the command. */
export function leafCommands(command: Command, prefix: string[] = []): [string, Command][] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return sub.commands.length === 0 ? [[path.join(" "), sub] as [string, Command]] : leafCommands(sub, path);
  });
}

/** Appends its examples to each command's help. */
export function addHelpExamples(program: Command): void {
  for (const [path, command] of leafCommands(program)) {
    const examples = helpExamples[path];
    if (!examples) continue;
    command.addHelpText("after", `\nExamples:\n${examples.map((e) => `  $ ${e}`).join("\n")}\n`);
  }
}
