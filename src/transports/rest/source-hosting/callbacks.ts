import { Hono } from "hono";
import type { Deps } from "../../../deps.ts";
import { AppError } from "../../../errors.ts";
import { applyReviewOutcome } from "../../../features/remediations/review-outcome.ts";
import { completeGithubInstallation } from "../../../features/source-hosting/github/install-link.ts";
import type { WebEnv } from "../../web/env.ts";
import { requireSignIn, webSession } from "../../web/session.ts";

/** Webhook bodies are small JSON; anything larger is not one of the events we subscribe to. */
const MAX_WEBHOOK_BYTES = 5 * 1024 * 1024;

/** A web-flow code is 20 characters today; anything far longer is not one. */
const MAX_CODE_LENGTH = 512;

/**
 * What GitHub calls (outside `/api/v1`, no bearer token): the App's callback URL, which a browser
 * reaches after a person installed and authorised the App, and the webhook, authenticated by its
 * signature.
 */
export function githubCallbacks(deps: Deps): Hono<WebEnv> {
  const router = new Hono<WebEnv>();

  // The web UI's session: the installation goes to an organisation the person in this browser
  // manages (install-link.ts), so someone signed out signs in first and comes back
  // (before the query is judged: the login page brings the whole callback URL back).
  router.get("/callback", webSession(), requireSignIn(), async (c) => {
    const installationId = Number(c.req.query("installation_id"));
    const state = c.req.query("state") ?? "";
    // The proof of who came back: without it the id in the URL is only the caller's claim.
    const code = c.req.query("code") ?? "";
    if (!Number.isSafeInteger(installationId) || installationId <= 0 || !state) {
      throw new AppError("invalid_request", "installation_id and state are required.");
    }
    if (!code) {
      throw new AppError(
        "invalid_request",
        "code is required: GitHub adds it when the App requests user authorization on install (request_oauth_on_install).",
      );
    }
    if (code.length > MAX_CODE_LENGTH)
      throw new AppError("invalid_request", "code is too long to be GitHub's.");
    const user = c.get("webUser");
    if (!user) throw new AppError("unauthorized", "Sign in first.");
    const linked = await completeGithubInstallation({ deps, installationId, state, code, user });
    return c.json({
      ...linked,
      next: "Register a repository of this installation: POST /api/v1/environments/{environmentId}/repositories with provider github.",
    });
  });

  router.post("/webhook", async (c) => {
    const github = deps.remediation.github;
    if (!github) throw new AppError("provider_unavailable", "No GitHub App is configured on this service.");
    const body = await c.req.text();
    if (Buffer.byteLength(body) > MAX_WEBHOOK_BYTES)
      throw new AppError("payload_too_large", "Webhook body too large.");
    const outcome = await github.receiveWebhook({
      id: c.req.header("x-github-delivery") ?? "",
      name: c.req.header("x-github-event") ?? "",
      signature: c.req.header("x-hub-signature-256") ?? "",
      body,
    });
    const moved = outcome ? await applyReviewOutcome(deps, outcome) : [];
    return c.json({ received: true, remediations: moved }, 202);
  });
  return router;
}
