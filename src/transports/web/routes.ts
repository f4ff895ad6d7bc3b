import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError } from "../../errors.ts";
import { refuseUnstorableText } from "../http/unstorable-text.ts";
import { registerAssets } from "./assets.ts";
import { callApprovalContext, environmentContext, orgContext, remediationContext } from "./contexts.ts";
import { verifyCsrf } from "./csrf.ts";
import type { WebEnv } from "./env.ts";
import { handleWebError } from "./error-page.ts";
import { registerApiKeyPages } from "./pages/api-keys.ts";
import { registerApprovalPages } from "./pages/approve.ts";
import { registerAuditPages } from "./pages/audit.ts";
import { registerCallApprovalPages } from "./pages/call-approval.ts";
import { registerConnectionActions } from "./pages/connection-actions.ts";
import { registerConnectionCreatePages } from "./pages/connection-form.ts";
import { registerConnectionListPage } from "./pages/connections-list.ts";
import { registerCredentialUploadPages } from "./pages/credential-upload.ts";
import { registerHomePages } from "./pages/home.ts";
import { registerInvitationPages } from "./pages/invitation.ts";
import { registerLoginPages } from "./pages/login.ts";
import { registerLogPages } from "./pages/logs.ts";
import { registerMemberPages } from "./pages/members.ts";
import { registerProblemPages } from "./pages/problems.ts";
import { registerRemediationReviewPages } from "./pages/remediation-review.ts";
import { registerRemediationRunPages } from "./pages/remediation-run.ts";
import { registerRemediationListPages } from "./pages/remediations-list.ts";
import { registerRepositoryPages } from "./pages/repositories.ts";
import { registerRepositoryCreatePages } from "./pages/repository-create.ts";
import { registerServicePages } from "./pages/services.ts";
import { registerTelemetryKeyPages } from "./pages/telemetry-keys.ts";
import { registerTracePages } from "./pages/trace.ts";
import { registerWebhookPages } from "./pages/webhooks.ts";
import { securityHeaders } from "./security-headers.ts";
import { requireSignIn, webSession } from "./session.ts";

/** Forms are small; the largest is a tool approval naming up to a thousand tools. */
const FORM_LIMIT_BYTES = 256 * 1024;

/**
 * The server-rendered web UI. A transport like REST and /mcp: pages read a form, call a verb
 * with the signed-in user's actor, and render the result or the verb's refusal. Middleware is
 * scoped to the UI's own paths, so none of it touches /api/v1, /mcp or /v1.
 */
export function createWebRoutes(): Hono<WebEnv> {
  const web = new Hono<WebEnv>();
  web.onError(handleWebError);
  registerAssets(web);

  const pages = [
    "/",
    "/login",
    "/logout",
    "/invitations/*",
    "/orgs/*",
    "/approve",
    "/credential-uploads",
    "/remediations/*",
    "/call-approvals/*",
  ];
  for (const path of pages) {
    web.use(
      path,
      securityHeaders(),
      bodyLimit({
        maxSize: FORM_LIMIT_BYTES,
        onError: () => {
          throw new AppError("payload_too_large", "That form was too large to accept.");
        },
      }),
      refuseUnstorableText("form"),
      webSession(),
    );
  }
  web.use("/login", verifyCsrf());
  web.use("/invitations/*", verifyCsrf());
  web.use("/approve", requireSignIn(), verifyCsrf());
  web.use("/credential-uploads", requireSignIn(), verifyCsrf());
  web.use("/orgs/:orgId/*", requireSignIn(), verifyCsrf(), orgContext());
  web.use("/orgs/:orgId/environments/:environmentId/*", environmentContext());
  // The links patchbay hands out for a run (thread, review, approval) carry no organisation.
  web.use("/remediations/:remediationId/*", requireSignIn(), verifyCsrf(), remediationContext());
  // A pending write call's page (its `url`), likewise without an organisation in the path.
  web.use("/call-approvals/:callApprovalId/*", requireSignIn(), verifyCsrf(), callApprovalContext());

  registerHomePages(web);
  registerLoginPages(web);
  registerInvitationPages(web);
  registerMemberPages(web);
  registerApprovalPages(web);
  registerCredentialUploadPages(web);
  registerApiKeyPages(web);
  registerWebhookPages(web);
  registerAuditPages(web);
  registerConnectionListPage(web);
  registerConnectionCreatePages(web);
  registerConnectionActions(web);
  registerTelemetryKeyPages(web);
  registerServicePages(web);
  registerLogPages(web);
  registerTracePages(web);
  registerProblemPages(web);
  registerRepositoryPages(web);
  registerRepositoryCreatePages(web);
  registerRemediationListPages(web);
  registerRemediationRunPages(web);
  registerRemediationReviewPages(web);
  registerCallApprovalPages(web);

  web.all("/remediations/*", () => {
    throw new AppError("not_found", "There is no such page.");
  });
  web.all("/call-approvals/*", () => {
    throw new AppError("not_found", "There is no such page.");
  });
  web.all("/orgs/*", () => {
    throw new AppError("not_found", "There is no such page.");
  });
  return web;
}
