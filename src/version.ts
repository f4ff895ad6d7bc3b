import { readFileSync } from "node:fs";

/** The package version; the CLI's `--version` and the OpenAPI `info.version` report it. */
export const version: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
