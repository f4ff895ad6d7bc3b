/**
 * An autonomous agent using patchbay through x402 (spec part 1B), with the official client
 * (`@x402/fetch`) and a viem account:
 *
 *   1. discovers the catalog (GET /x402, free),
 *   2. signs up its wallet (POST /x402/signup) — or, if it already has, follows next_actions,
 *   3. starts guided onboarding, echoing x_assumed_state (skipped with AGENT_ONBOARDING=off),
 *   4. sends a little OpenTelemetry with the publishable key,
 *   5. polls the session (free) until a human is needed or it is ready,
 *   6. finds the problem its telemetry revealed (paid reads) and inspects it,
 *   7. asks for the fix as suggested (paid, echoing x_assumed_state) and polls the run (free)
 *      until a pull request is ready for a human — handing the operator any approval link —
 *      then reads the run's thread (free, JSON). patchbay never merges; the agent stops there.
 *
 * The free reads take the onboarding session's token while the agent has a live one; otherwise
 * the wallet signs in with x402's `sign-in-with-x` extension (the SDK's client extension answers
 * the route's 402 challenge with a signature, no payment), which works for as long as the
 * wallet exists — a pull request may wait for review much longer than a session's 24 hours.
 *
 * Run against `npm start` (the banner prints the command):
 *   PATCHBAY_URL=http://localhost:8787 AGENT_PRIVATE_KEY=0x… npm run example:agent
 * It follows `next_actions` the way the service tells agents to: the first one, unless there
 * is a reason not to.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { createSIWxClientExtension } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment } from "@x402/fetch";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

type NextAction = {
  action: string;
  method: "GET" | "POST";
  href: string;
  price: string;
  description: string;
  body?: Record<string, unknown>;
  x_assumed_state?: string;
};
type CatalogItem = {
  method: string;
  path: string;
  price: string;
  accepts: { network: string; asset: string }[];
  /** false: this server cannot run the route now; calling it answers 503 `unavailableCode`. */
  available: boolean;
  unavailableReason?: string;
};

const base = (process.env.PATCHBAY_URL ?? "http://localhost:8787").replace(/\/$/, "");
const key = process.env.AGENT_PRIVATE_KEY as Hex | undefined;
if (!key) throw new Error("Set AGENT_PRIVATE_KEY (the banner of `npm start` prints the demo payer's key).");
const account = privateKeyToAccount(key);
const onboarding = (process.env.AGENT_ONBOARDING ?? "on") !== "off";
const log = (step: string, detail: unknown = "") =>
  console.log(`• ${step}`, typeof detail === "string" ? detail : JSON.stringify(detail, null, 2));

// 1. Discover: what is for sale, at what price, paid in which token.
const catalog = (await (await fetch(`${base}/x402`)).json()) as {
  items: CatalogItem[];
  paymentsAvailable: boolean;
};
if (!catalog.paymentsAvailable) throw new Error("this patchbay takes no payments right now");
log(
  "catalog",
  catalog.items.map((i) => `${i.method} ${i.path} ${i.price}${i.available ? "" : " (unavailable here)"}`),
);
const accepts = catalog.items.flatMap((i) => i.accepts);
const { asset } = accepts[0] ?? { asset: "" };
const network = (accepts[0]?.network ?? "") as `${string}:${string}`;

// The SDK pays only in assets it knows or that are allowed explicitly, with a cap per payment.
// Where a route offers a wallet sign-in instead (the free reads), the SIWX extension signs it.
const client = x402Client.fromConfig({
  schemes: [{ network, client: new ExactEvmScheme(account) }],
  spendControls: { allowedAssets: [{ network, asset, maxAmountPerPayment: "10000000" }] },
});
client.registerExtension(createSIWxClientExtension({ signers: [account] }));
const paidFetch = wrapFetchWithPayment(fetch, client);

/** Calls a suggested action the way the service asks: body as given, x_assumed_state echoed. */
async function follow(action: NextAction, headers: Record<string, string> = {}): Promise<Response> {
  const init: RequestInit = { method: action.method, headers: { ...headers } };
  if (action.x_assumed_state)
    (init.headers as Record<string, string>)["x-assumed-state"] = action.x_assumed_state;
  if (action.method === "POST") {
    (init.headers as Record<string, string>)["content-type"] = "application/json";
    init.body = JSON.stringify(action.body ?? {});
  }
  return action.price === "free" ? fetch(action.href, init) : paidFetch(action.href, init);
}

// 2. Sign up (once per wallet). A wallet that already signed up gets 409 with next actions.
const signup = await paidFetch(`${base}/x402/signup`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ organizationName: `Agent ${account.address.slice(0, 10)}` }),
});
const signedUp = (await signup.json()) as {
  publishableKey?: { key: string };
  environment?: { id: string };
  next_actions: NextAction[];
  code?: string;
};
log(`signup → ${signup.status}`, signedUp.code ?? signedUp.publishableKey?.key.slice(0, 10));
if (!signup.ok && signedUp.code !== "already_signed_up") {
  // A problem+json body: `code`, `detail`, and for payments the protocol's `reason`.
  console.error(signedUp);
  process.exit(1);
}
let actions = signedUp.next_actions;
// What is shown once is kept, so a second run can go on where the first stopped.
const memoryFile = join(tmpdir(), `patchbay-agent-${account.address.toLowerCase()}.json`);
const memory = existsSync(memoryFile)
  ? (JSON.parse(readFileSync(memoryFile, "utf8")) as { publishableKey?: string; sessionToken?: string })
  : {};
const remember = () => writeFileSync(memoryFile, JSON.stringify(memory), { mode: 0o600 });
memory.publishableKey = signedUp.publishableKey?.key ?? memory.publishableKey;
remember();
const publishableKey = memory.publishableKey;

// 3. Start onboarding (or poll the session in progress), as the first suggestion says.
let session: { sessionId: string; sessionToken?: string; state: string; approvalUrl?: string } | undefined;
let sessionToken = onboarding ? memory.sessionToken : undefined;
const first = actions[0];
if (onboarding && first?.action === "start_onboarding") {
  const res = await follow(first);
  const body = (await res.json()) as typeof session & { next_actions: NextAction[] };
  log(`onboard → ${res.status}`, body?.state);
  session = body;
  sessionToken = body?.sessionToken;
  memory.sessionToken = sessionToken;
  remember();
  actions = body?.next_actions ?? [];
}

// 4. Telemetry: one span, sent with the publishable key (free).
if (publishableKey) {
  const now = BigInt(Date.now()) * 1_000_000n;
  const res = await fetch(`${base}/v1/traces`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${publishableKey}` },
    body: JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "example-agent" } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: randomBytes(16).toString("hex"),
                  spanId: randomBytes(8).toString("hex"),
                  name: "GET /orders/{id}",
                  kind: 2,
                  startTimeUnixNano: (now - 5_000_000n).toString(),
                  endTimeUnixNano: now.toString(),
                  status: { code: 2 },
                  // What the OpenTelemetry SDK records for `span.recordException(error)`.
                  events: [
                    {
                      name: "exception",
                      timeUnixNano: now.toString(),
                      attributes: [
                        { key: "exception.type", value: { stringValue: "OrderNotFoundError" } },
                        { key: "exception.message", value: { stringValue: "order ord_4711 not found" } },
                        {
                          key: "exception.stacktrace",
                          value: {
                            stringValue:
                              "OrderNotFoundError: order ord_4711 not found\n    at findOrder (/srv/shop/orders.ts:14:11)",
                          },
                        },
                      ],
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    }),
  });
  log(`telemetry → ${res.status}`);
}

/**
 * A free read: with the session token while it lasts, else signed in with the wallet. An
 * unsigned call to a free read answers 402 offering no payment, only a sign-in challenge, which
 * the client's SIWX extension signs and sends back in SIGN-IN-WITH-X.
 */
async function freeRead(url: string): Promise<Response> {
  if (sessionToken) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${sessionToken}` } });
    if (res.status !== 401) return res;
    log("the session token has expired; signing in with the wallet from now on");
    sessionToken = undefined;
  }
  return paidFetch(url);
}

// 5. Poll the session (free) until a human is needed or it is ready.
const poll = actions.find((a) => a.action === "poll_onboarding");
if (poll) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await freeRead(poll.href);
    session = (await res.json()) as typeof session;
    if (session?.state !== "awaiting-telemetry") break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log("session", { state: session?.state, approvalUrl: session?.approvalUrl });
  if (session?.state === "awaiting-operator") {
    log(
      "a human must act: open this link, sign in, claim the organisation and connect a repository",
      session.approvalUrl,
    );
  }
}

// 6. The problem the telemetry revealed: list (paid), then inspect the first, as next_actions say.
let remediate: NextAction | undefined;
for (let attempt = 0; attempt < 10; attempt++) {
  const res = await paidFetch(`${base}/x402/problems`);
  const page = (await res.json()) as {
    items?: { id: string; title: string; count: number }[];
    next_actions?: NextAction[];
  };
  const inspect = page.next_actions?.find((a) => a.action === "inspect_problem");
  if (inspect) {
    log(
      "problems",
      page.items?.map((p) => `${p.title} ×${p.count}`),
    );
    const problem = (await (await follow(inspect)).json()) as {
      title: string;
      sampleTraceIds: string[];
      culprit: string;
      next_actions: NextAction[];
    };
    remediate = problem.next_actions.find((a) => a.action === "remediate");
    log("problem", {
      title: problem.title,
      culprit: problem.culprit,
      sampleTraceIds: problem.sampleTraceIds,
    });
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
}

// 7. Ask for the fix as suggested, then poll the run (free) until a pull request waits for a
// human. A run that needs the operator (a repository to connect, a risky change to approve) says
// so with a link; the agent passes it on and keeps polling.
type Run = {
  remediationId: string;
  status: string;
  prUrl: string | null;
  reason: string | null;
  approval: { approvalUrl: string; message: string } | null;
  // How sure patchbay is of the fix, from its own test runs in the sandbox.
  verification: {
    state: "reproduced-and-fixed" | "fixed-without-reproduction" | "not-fixed";
    reason: string | null;
    reproduction: { tests: string[] } | null;
    baseRun: { command: string; exitCode: number | null } | null;
    branchRun: { command: string; exitCode: number | null } | null;
  } | null;
};
if (!remediate) {
  // A fix is suggested only when this server can start one: the catalog says why it cannot.
  const fix = catalog.items.find((i) => i.path === "/x402/problems/{id}/remediations");
  log("no fix offered", fix?.available === false ? fix.unavailableReason : "no open problem found");
}
if (remediate) {
  const res = await follow(remediate);
  const started = (await res.json()) as {
    remediationId?: string;
    threadUrl?: string;
    threadApiUrl?: string;
    code?: string;
    detail?: string;
  };
  log(
    `remediate → ${res.status}`,
    started.remediationId
      ? { remediationId: started.remediationId, threadUrl: started.threadUrl }
      : { code: started.code, detail: started.detail },
  );
  log(sessionToken ? "polling with the session token" : "polling signed in with the wallet (sign-in-with-x)");
  const waitMs = Number(process.env.AGENT_WAIT_SECONDS ?? "600") * 1000;
  const deadline = Date.now() + waitMs;
  let seen = "";
  while (started.remediationId && Date.now() < deadline) {
    const polled = await freeRead(`${base}/x402/remediations/${started.remediationId}`);
    const run = (await polled.json()) as Run;
    if (!polled.ok) {
      log(`poll → ${polled.status}`, run);
      break;
    }
    if (run.status !== seen) {
      seen = run.status;
      log(
        `remediation ${run.status}`,
        run.approval ? `a human must act: ${run.approval.message} ${run.approval.approvalUrl}` : "",
      );
    }
    if (run.status === "awaiting-review" && run.prUrl) {
      log("pull request ready for a human to review and merge (patchbay never merges)", run.prUrl);
      const v = run.verification;
      if (v) {
        log(
          `verification: ${v.state}`,
          v.state === "reproduced-and-fixed"
            ? `${v.reproduction?.tests.join(", ")}: exit ${v.baseRun?.exitCode} on the default branch, exit ${v.branchRun?.exitCode} with the fix`
            : (v.reason ?? ""),
        );
      }
      // The run's story as JSON: what patchbay, the task agent and people did, oldest first.
      if (started.threadApiUrl) {
        const thread = (await (await freeRead(started.threadApiUrl)).json()) as {
          messages: { from: string; type: string; text: string }[];
        };
        log(
          `thread: ${thread.messages.length} messages`,
          thread.messages.map((m) => `${m.from} ${m.type}: ${m.text.slice(0, 100)}`),
        );
      }
      break;
    }
    if (["merged", "closed", "failed", "cancelled"].includes(run.status)) {
      log("remediation ended", {
        status: run.status,
        reason: run.reason,
        verification: run.verification?.state,
      });
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}
