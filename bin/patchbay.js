#!/usr/bin/env node
// Runs the TypeScript sources directly (Node ≥ 22.18 strips types); see README.
import { main } from "../src/transports/cli/main.ts";

await main(process.argv);
