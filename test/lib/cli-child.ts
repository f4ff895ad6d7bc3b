// `patchbay …` as a child process with an API key, against an app served on a loopback port
// (`listen` in test/http.ts): the CLI as a user runs it, without a profile (HOME points nowhere)
// or any other environment.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../../bin/patchbay.js", import.meta.url));

export type CliRun = { code: number; stdout: string; stderr: string };

/** Runs `patchbay <args>` with PATCHBAY_BASE_URL and PATCHBAY_API_KEY; never rejects. */
export function runCli(baseUrl: string, apiKey: string, args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      {
        env: {
          PATH: process.env.PATH,
          HOME: "/nonexistent",
          PATCHBAY_BASE_URL: baseUrl,
          PATCHBAY_API_KEY: apiKey,
        },
      },
      (error, stdout, stderr) =>
        resolve({ code: typeof error?.code === "number" ? error.code : 0, stdout, stderr }),
    );
  });
}
