import { z } from "@hono/zod-openapi";
import { repositoryProviders } from "../../platform/db/schema/repositories.ts";
import { singleLineText } from "../../schemas.ts";
import { EnvironmentParams } from "../environments/index.ts";

/** A GitHub `owner/name`: GitHub's own limits on account and repository names. */
export const GITHUB_FULL_NAME = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;

const services = z
  .array(singleLineText(128))
  .min(1)
  .max(50)
  .refine((list) => new Set(list).size === list.length, "services must be unique")
  .openapi({
    description:
      "The `service.name`s whose problems this repository fixes. A service maps to one repository per environment.",
    example: ["checkout"],
  });

const testCommand = singleLineText(1_000).openapi({
  description:
    "Run with `sh -c` at the repository root inside the sandbox; exit code 0 means the tests pass.",
  example: "npm test",
});

const branch = singleLineText(200).openapi({ example: "main" });

export const CreateLocalRepositoryBody = z
  .object({
    provider: z.literal("local-git"),
    path: z.string().min(1).max(4_096).openapi({ example: "/srv/git/checkout" }),
    defaultBranch: branch.default("main"),
    testCommand,
    services,
  })
  .strict()
  .openapi("CreateLocalGitRepository");

export const CreateGithubRepositoryBody = z
  .object({
    provider: z.literal("github"),
    installationId: z.number().int().positive().openapi({ example: 41_234_567 }),
    fullName: z.string().regex(GITHUB_FULL_NAME, "must be owner/name").openapi({ example: "acme/checkout" }),
    defaultBranch: branch
      .optional()
      .openapi({ description: "Default: the repository's default branch on GitHub." }),
    testCommand,
    services,
  })
  .strict()
  .openapi("CreateGithubRepository");

export const CreateRepositoryBody = z
  .discriminatedUnion("provider", [CreateLocalRepositoryBody, CreateGithubRepositoryBody])
  .openapi("CreateRepository");
export type CreateRepositoryInput = z.infer<typeof CreateRepositoryBody>;

export const RepositorySchema = z
  .object({
    id: z.string(),
    environmentId: z.uuid(),
    provider: z.enum(repositoryProviders),
    path: z.string().optional().openapi({ description: "local-git only." }),
    installationId: z.number().int().optional().openapi({ description: "github only." }),
    fullName: z.string().optional().openapi({ description: "github only." }),
    defaultBranch: z.string(),
    testCommand: z.string(),
    services: z.array(z.string()),
    createdBy: z.string(),
    createdAt: z.iso.datetime(),
  })
  .openapi("Repository", {
    example: {
      id: "rep_2e1y0zqtv97tr8rz3w838kpb",
      environmentId: "0b6f2c1e-8d4a-4f3b-9c2d-1e0f9a8b7c6d",
      provider: "local-git",
      path: "/srv/git/checkout",
      defaultBranch: "main",
      testCommand: "npm test",
      services: ["checkout"],
      createdBy: "usr_2a4c6e8g0j2l4n6q8s0u2w4y",
      createdAt: "2026-11-22T10:00:00.000Z",
    },
  });
export type Repository = z.infer<typeof RepositorySchema>;

export const RepositoryParams = EnvironmentParams.extend({
  repositoryId: z
    .string()
    .max(64)
    .openapi({ param: { name: "repositoryId", in: "path" }, example: "rep_2e1y0zqtv97tr8rz3w838kpb" }),
});
