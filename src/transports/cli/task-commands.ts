import type { Command } from "commander";
import type { CallApproval, Task } from "../../features/tasks/schemas.ts";
import { usageError } from "./cli-error.ts";
import { keyValue, table, truncate } from "./format.ts";
import { addEnvironmentGroup, type EnvironmentSession, type Resource, type SessionFlags } from "./session.ts";

const tasks: Resource = { group: "task", collection: "tasks", item: ["<task-id>", "e.g. tsk_…"] };

type DecisionFlags = SessionFlags & { approval?: string };

/**
 * `patchbay environment task list|get|call-approvals|approve-call|reject-call` (docs/cli.md):
 * what the task agent did, and the write calls it waits on a person for.
 */
export function registerTaskCommands(environment: Command): void {
  const { add } = addEnvironmentGroup(environment, tasks, "Task agent runs of one environment", {
    noun: "tasks",
    description: "List the environment's tasks, newest first",
    render: (items: Task[]) =>
      table(
        ["ID", "KIND", "STATUS", "WAITING FOR", "CREATED"],
        items.map((t) => [
          t.id,
          t.kind,
          t.status,
          t.awaitingApproval ? `approval ${t.awaitingApproval.callApprovalId}` : "",
          t.createdAt,
        ]),
      ),
  });

  add({
    name: "get",
    description: "Show one task: status, usage, and what it waits for",
    item: true,
    run: async (session) => {
      const task = (await session.request({ method: "GET", path: session.path() })) as Task;
      session.show(
        task,
        keyValue([
          ["ID", task.id],
          ["Kind", task.kind],
          ["Status", task.status],
          ...(task.errorCode
            ? [["Error", `${task.errorCode}: ${task.errorMessage ?? ""}`] as [string, string]]
            : []),
          ...(task.summary ? [["Summary", task.summary] as [string, string]] : []),
          ["Steps", `${task.usage.steps} of ${task.budgets.maxSteps}`],
          ...(task.nextStep ? [["Next step", task.nextStep] as [string, string]] : []),
          ["Created", task.createdAt],
        ]),
      );
    },
  });

  add({
    name: "call-approvals",
    description: "List the task's write calls that wait for, or were given, a person's approval",
    item: true,
    run: async (session) => {
      const list = (await session.request({ method: "GET", path: session.path("/call-approvals") })) as {
        items: CallApproval[];
      };
      const rows = list.items.map((a) => [
        a.id,
        a.state,
        a.toolName,
        `${a.connectionId}@${a.connectionRevision}`,
        truncate(JSON.stringify(a.arguments), 60),
        a.state === "pending" ? a.expiresAt : (a.decidedBy ?? ""),
      ]);
      session.show(
        list,
        rows.length === 0
          ? "No call approvals.\n"
          : table(["ID", "STATE", "TOOL", "CONNECTION@REVISION", "ARGUMENTS", "EXPIRES / DECIDED BY"], rows),
      );
    },
  });

  for (const decision of ["approve", "reject"] as const) {
    add<DecisionFlags>({
      name: `${decision}-call`,
      description:
        decision === "approve"
          ? "Approve one pending write call (owners and admins): it is made once, with exactly the arguments shown"
          : "Reject one pending write call: it is not made, and the agent is told",
      item: true,
      options: [
        ["--approval <id>", "the call approval (cap_…), from call-approvals"],
        ["--idempotency-key <key>", "Idempotency-Key to send (default: a new UUID, reported)"],
      ],
      run: (session, flags) => decide(session, flags, decision),
    });
  }
}

async function decide(session: EnvironmentSession, flags: DecisionFlags, decision: "approve" | "reject") {
  if (!flags.approval) {
    throw usageError(
      "--approval <id> is required",
      `list them with: patchbay environment task call-approvals ${session.id} --environment ${session.environmentId}`,
    );
  }
  const approval = (await session.request({
    method: "POST",
    path: session.path(`/call-approvals/${encodeURIComponent(flags.approval)}/decision`),
    headers: { "idempotency-key": session.idempotencyKey() },
    body: { decision },
  })) as CallApproval;
  const verb = decision === "approve" ? "Approved" : "Rejected";
  session.show(
    approval,
    `${verb} ${approval.id}: ${approval.toolName} ${JSON.stringify(approval.arguments)}.\n`,
  );
}
