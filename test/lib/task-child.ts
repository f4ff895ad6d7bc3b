// A worker in its own process, for tests that kill it: runs one task of the database named by
// TASK_CHILD (JSON: { database: DatabaseTarget, ca: TestCa, port, task, toolName }) with a
// scripted model that calls `toolName` once, then finishes. Prints `RUNNING` before the task
// starts and `FINISHED <status>` if it ever ends. Run as `node test/lib/task-child.ts`.

import { openDatabase } from "../../src/platform/db/client.ts";
import { scriptedModel } from "./scripted-model.ts";
import { runAsJob, taskDeps } from "./task-setup.ts";

const { database, ca, port, task, toolName } = JSON.parse(process.env.TASK_CHILD ?? "{}");
const handle = await openDatabase(database);
const model = scriptedModel([
  { toolCalls: [{ name: toolName, input: {} }] },
  { toolCalls: [{ name: "finish", input: { summary: "done" } }] },
]).model;
const deps = taskDeps({ database: handle, ca, ports: [port], languageModel: model });
console.log("RUNNING");
const outcome = await runAsJob(deps, task);
console.log(`FINISHED ${outcome?.status}`);
await deps.telemetry.close();
await deps.egress.close();
await handle.close();
