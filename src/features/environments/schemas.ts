import { z } from "@hono/zod-openapi";
import type { environments } from "../../platform/db/schema/environments.ts";
import { singleLineText } from "../../schemas.ts";

const name = singleLineText(64).openapi({ example: "production" });

export const EnvironmentSchema = z
  .object({
    id: z.uuid(),
    organizationId: z.string(),
    name: z.string(),
    revision: z.number().int().min(1),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Environment", {
    example: {
      id: "0b6f2c1e-8d4a-4f3b-9c2d-1e0f9a8b7c6d",
      organizationId: "org_8k2m4n6p8r0t2v4x6z8b0d2f",
      name: "production",
      revision: 1,
      createdAt: "2026-11-22T10:00:00.000Z",
      updatedAt: "2026-11-22T10:00:00.000Z",
    },
  });
export type Environment = z.infer<typeof EnvironmentSchema>;

export const CreateEnvironmentBody = z.object({ name }).strict().openapi("CreateEnvironment");
export const UpdateEnvironmentBody = z.object({ name }).strict().openapi("UpdateEnvironment");

export const EnvironmentParams = z.object({
  environmentId: z
    .uuid()
    .openapi({ param: { name: "environmentId", in: "path" }, description: "Environment UUID." }),
});

export const toEnvironment = (row: typeof environments.$inferSelect): Environment => ({
  id: row.id,
  organizationId: row.organizationId,
  name: row.name,
  revision: row.revision,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});
