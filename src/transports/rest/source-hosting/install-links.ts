import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { listInstallationRepositories } from "../../../features/repositories/read-repositories.ts";
import { createGithubInstallLink } from "../../../features/source-hosting/github/install-link.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonResponse, problemResponses } from "../../http/openapi.ts";
import { idempotentChange } from "../operation.ts";

const tags = ["Source hosting"];

const InstallLinkSchema = z
  .object({
    url: z
      .url()
      .openapi({ description: "Open in a browser: install the App and select repositories on GitHub." }),
    expiresAt: z.iso.datetime(),
  })
  .openapi("GithubInstallLink");

const create = createRoute({
  method: "post",
  path: "/integrations/github/install-links",
  operationId: "createGithubInstallLink",
  tags,
  summary: "A link for a person to install patchbay's GitHub App for this organisation",
  ...idempotentChange,
  responses: { 201: jsonResponse(InstallLinkSchema, "The link (one hour)."), ...problemResponses(503) },
});

const InstallationParams = z.object({
  installationId: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: "installationId", in: "path" }, example: 41_234_567 }),
});

const repos = createRoute({
  method: "get",
  path: "/integrations/github/installations/{installationId}/repositories",
  operationId: "listGithubInstallationRepositories",
  tags,
  summary: "Repositories a linked installation may read (the selection made on GitHub)",
  request: { params: InstallationParams },
  responses: {
    200: jsonResponse(
      z
        .object({ items: z.array(z.object({ fullName: z.string(), defaultBranch: z.string() })) })
        .openapi("GithubRepositoryList"),
      "Repositories to register.",
    ),
    ...problemResponses(503),
  },
});

export function registerGithubRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(create, async (c) => c.json(createGithubInstallLink({ ctx: c.get("ctx") }), 201));
  app.openapi(repos, async (c) =>
    c.json(await listInstallationRepositories({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
}
